"""The event bots a daemon hosts (tarotd/event_bots.py), with each bot's daemon a stand-in
holding a real event desk: names, numbers, the cap, bots reused once their event is over, and
the homes a restarted host takes up again."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import socket
from collections.abc import Sequence
from pathlib import Path

import pytest

from protocol.event.event import EventError
from protocol.event.movement import Movement
from protocol.replication.identity import Identity
from tarotd.event_book import Heard
from tarotd.event_bots import MAX_EVENT_BOTS, SPEC, EventBots, can_listen
from tarotd.event_desk import EventDesk
from tarotd.store import Store


class StandIn:
    """A bot's daemon as the host sees it: its desk; started, served until interrupted.  It
    "listens" where it is told, a port chosen for it if told 0."""

    def __init__(
        self, home: Path, name: str, level: str, listen: str, peers: Sequence[tuple[str, bytes]]
    ):
        home.mkdir(parents=True, exist_ok=True)
        self.home, self.name, self.level, self.peers = home, name, level, list(peers)
        self.listen = listen
        port = int(listen.rpartition(":")[2]) or 40000 + len(list(home.parent.iterdir()))
        endpoint = f"{listen.rpartition(':')[0]}:{port}"
        self.store = Store(home / "db")
        self.events = EventDesk(Identity.generate(), lambda: endpoint, self.store)
        self.events.load()  # what it registered with before a restart
        self.stopped = asyncio.Event()

    async def start(self) -> None:
        pass

    async def serve(self) -> int:
        await self.stopped.wait()
        self.store.close()
        return 0

    def interrupt(self) -> None:
        self.stopped.set()


class Host:
    def __init__(self, home: Path, table_bots: int = 0) -> None:
        self.made: list[StandIn] = []
        self.bots = EventBots(home, "Claire", table_bots + 1, self.make, "tcp://127.0.0.1")

    def make(
        self, home: Path, name: str, level: str, listen: str, peers: Sequence[tuple[str, bytes]]
    ) -> StandIn:
        self.made.append(StandIn(home, name, level, listen, peers))
        return self.made[-1]


def an_event(tmp_path: Path, endpoint: str = "tcp://10.0.0.7:7000") -> tuple[EventDesk, Heard]:
    organiser = EventDesk(Identity.generate(), lambda: endpoint, Store(tmp_path / "org.db"))
    held = organiser.open("Soirée du club", 2, 1, 4, Movement.RANDOM)
    return organiser, Heard(held.config, held.record.entries[0].wire, endpoint, 1)


def test_bots_are_players_of_their_own_named_after_the_table_bots(tmp_path: Path) -> None:
    organiser, heard = an_event(tmp_path)

    async def go() -> None:
        host = Host(tmp_path / "home", table_bots=2)
        names = await host.bots.add(heard.config.event_id, heard, 3, "strong")
        assert names == ["Claire-bot3", "Claire-bot4", "Claire-bot5"]
        keys = {bot.events.key for bot in host.made}
        assert len(keys) == 3 and host.bots.keys() == keys
        for bot in host.made:
            assert bot.level == "strong" and bot.peers == [(heard.endpoint, organiser.key)]
            held = bot.events.held[heard.config.event_id]
            assert held.outbox  # its registration, sent at its daemon's next heartbeat
        spec = json.loads((tmp_path / "home" / "event-bots" / "2" / SPEC).read_text())
        assert spec == {
            "level": "strong",
            "peers": [[heard.endpoint, organiser.key.hex()]],
            "port": 40002,  # where it listens: a port of its own, chosen at its start
        }
        assert [bot.listen for bot in host.made] == ["tcp://127.0.0.1:0"] * 3
        with pytest.raises(EventError, match="level"):
            await host.bots.add(heard.config.event_id, heard, 1, "grandmaster")
        with pytest.raises(EventError, match="at most 16"):
            await host.bots.add(heard.config.event_id, heard, MAX_EVENT_BOTS - 2, "strong")
        assert len(host.made) == 3  # nothing done
        await host.bots.close()
        assert all(bot.stopped.is_set() for bot in host.made)

    asyncio.run(go())


def test_a_restarted_host_takes_its_bots_up_again_and_reuses_the_free_ones(
    tmp_path: Path,
) -> None:
    _, heard = an_event(tmp_path, "tcp://0.0.0.0:7000")
    (tmp_path / "2").mkdir()
    _, tonight = an_event(tmp_path / "2")

    async def go() -> None:
        host = Host(tmp_path / "home")
        await host.bots.add(heard.config.event_id, heard, 2, "basic")
        assert all(bot.peers == [] for bot in host.made)  # a wildcard: discovery finds it
        await host.bots.close()
        again = Host(tmp_path / "home")
        await again.bots.resume()
        assert [(b.name, b.level) for b in again.made] == [
            ("Claire-bot1", "basic"),
            ("Claire-bot2", "basic"),
        ]
        # still registered in an unfinished event: a new event gets new bots, numbered on
        names = await again.bots.add(tonight.config.event_id, tonight, 1, "basic")
        assert names == ["Claire-bot3"]
        await again.bots.close()

    asyncio.run(go())


def test_a_bot_whose_event_is_over_is_taken_for_the_same_organisers_next(
    tmp_path: Path,
) -> None:
    organiser, heard = an_event(tmp_path)
    held = organiser.open("Le lendemain", 1, 1, 4, Movement.RANDOM)
    tomorrow = Heard(held.config, held.record.entries[0].wire, heard.endpoint, 1)
    (tmp_path / "other").mkdir()
    _, elsewhere = an_event(tmp_path / "other", "tcp://10.0.0.8:7000")

    async def go() -> None:
        host = Host(tmp_path / "home")
        assert await host.bots.add(heard.config.event_id, heard, 2, "basic") == [
            "Claire-bot1",
            "Claire-bot2",
        ]
        first = host.made[0].events.held[heard.config.event_id]
        first.report = dataclasses.replace(first.report, closed=first.config.rounds)  # over
        assert await host.bots.add(tomorrow.config.event_id, tomorrow, 1, "basic") == [
            "Claire-bot1"
        ]
        # another level: a new bot
        assert await host.bots.add(tomorrow.config.event_id, tomorrow, 1, "strong") == [
            "Claire-bot3"
        ]
        host.made[0].events.held[tomorrow.config.event_id].report = dataclasses.replace(
            host.made[0].events.held[tomorrow.config.event_id].report, closed=1
        )
        # another organiser's event: bot 1 is free, but not linked to that organiser
        assert await host.bots.add(elsewhere.config.event_id, elsewhere, 1, "basic") == [
            "Claire-bot4"
        ]
        await host.bots.close()

    asyncio.run(go())


def test_a_restarted_host_takes_its_bots_up_on_their_ports_or_others_if_taken(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The record's players reach a bot at the endpoint it registered: taken up again, it
    listens there — unless another program took the port meanwhile."""
    _, heard = an_event(tmp_path)
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen()
    taken = held.getsockname()[1]

    async def go() -> None:
        host = Host(tmp_path / "home")
        await host.bots.add(heard.config.event_id, heard, 2, "basic")
        assert [b.events.endpoint() for b in host.made] == [
            "tcp://127.0.0.1:40001",
            "tcp://127.0.0.1:40002",
        ]
        await host.bots.close()
        spec = tmp_path / "home" / "event-bots" / "2" / SPEC
        spec.write_text(json.dumps(json.loads(spec.read_text()) | {"port": taken}))
        again = Host(tmp_path / "home")
        await again.bots.resume()
        assert [b.listen for b in again.made] == ["tcp://127.0.0.1:40001", "tcp://127.0.0.1:0"]
        assert json.loads(spec.read_text())["port"] == 40002  # where it listens now
        assert f"its port {taken} is taken" in caplog.text
        # what it plays in, for the host to find by id (it does not play it itself)
        assert again.bots.events() == {heard.config.event_id: "Soirée du club"}
        await again.bots.close()

    with held, caplog.at_level(logging.WARNING):
        asyncio.run(go())


def test_a_port_is_free_to_listen_on_unless_a_program_listens_there() -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        held.listen()
        assert not can_listen("tcp://127.0.0.1", port)
        assert not can_listen("tcp://*", port)
    assert can_listen("tcp://127.0.0.1", port)
    assert not can_listen("tcp://eth-nowhere", port)  # not an address: not tried
