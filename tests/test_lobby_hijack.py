"""The lobby under a stranger's attacks, between real ``tarotd`` daemons on 127.0.0.1 (issue
26, item 2), the stranger a scripted peer with a throw-away key (:mod:`intruder`).

* **Hijack.**  Daemons forming ``--table club`` with each other (``--peer``) hear a stranger
  offer ``club`` under the id ``00…00`` — the smallest there is — and under an id of its own.
  They used to withdraw their offer and join the stranger's: then the table never started, or
  started with the stranger at seat 0.  Now neither offer is anything to them, its joins are
  refused, and they form their table and play it.
* **A manifest with more members than seats**, from an opener the daemon trusts, with the
  signatures and coins of three of the four: it used to set the table ready and raise a
  ``KeyError``, the lobby wedged for good (neither started nor left).  Now it is refused
  whole, said in the log, and the opener's next, well-formed manifest starts the table — its
  coins open none of its commitments (they are of another form), so the daemon names its two
  seats after ``--timeout`` and draws the first dealer without them (``tarotd/coin.py``).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from daemons import (
    assert_no_traceback,
    daemon_argv,
    free_ports,
    home_key,
    kill_all,
    log_path,
    logs,
    scores,
    spawn,
)
from intruder import Intruder

from client.api import DaemonRefused, DaemonUnavailable, ask
from protocol.replication.identity import Identity
from tarotd.coin import seal_document
from tarotd.lobby import Member, manifest_bytes

pytestmark = pytest.mark.daemons

NAMES = ["joueur0", "joueur1", "joueur2"]


async def answer(home: Path, op: str, **params: Any) -> Any:
    """The daemon's answer, or None while it does not answer yet (or refuses)."""
    try:
        return await ask(home, op, timeout=5, **params)
    except (DaemonUnavailable, DaemonRefused, OSError):
        return None


async def until(
    what: str, check: Callable[[], Any], timeout: float, tmp_path: Path, count: int
) -> Any:
    """The first true value of ``check()`` (awaited if it is a coroutine), polled every 0.1 s;
    the test fails with the ``count`` daemons' logs after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return result
        await asyncio.sleep(0.1)
    pytest.fail(f"waited {timeout} s for {what}:\n{logs(tmp_path, count)}")


def seated(status: Any, name: str) -> bool:
    return isinstance(status, dict) and any(
        name in table["seats"] for table in status.get("tables", ())
    )


@pytest.mark.parametrize("stranger", ["silent", "seating itself"])
def test_a_stranger_offering_the_smallest_id_takes_no_daemon_away_and_no_seat(
    tmp_path: Path, stranger: str
) -> None:
    *ports, port = free_ports(4)
    homes = [tmp_path / f"d{i}" for i in range(3)]
    processes = []

    def start(i: int) -> None:
        argv = daemon_argv(
            homes[i],
            NAMES[i],
            ports[i],
            [(h, p) for j, (h, p) in enumerate(zip(homes, ports)) if j != i],
            deals=1,
            timeout=10,
        )
        processes.append(spawn(argv, log_path(tmp_path, i)))

    async def attack() -> None:
        intruder = Intruder(port)
        zero = intruder.offer_under(bytes(16), "club", 3)["table"]
        own = intruder.offer_opened("club", 3)["table"]
        ours, tried = {zero, own}, set[bytes]()
        try:
            for i in (0, 1):  # two daemons waiting for a third: the "every waiting daemon"
                start(i)
            # Then the stranger links to them: a link where nothing answers yet closes after
            # 5 s (tarotd.mesh.bounds), and two daemons may take longer than that to start.
            for home in homes[:2]:
                await until(
                    "the daemons answering",
                    functools.partial(answer, home, "status"),
                    60,
                    tmp_path,
                    2,
                )
            await intruder.start(
                [(f"tcp://127.0.0.1:{p}", home_key(h)) for h, p in zip(homes, ports)]
            )
            await until(
                "the two daemons up with the stranger",
                lambda: len(intruder.up) == 2,
                30,
                tmp_path,
                2,
            )
            deadline = time.monotonic() + 3  # what they do with its offers, before the third comes
            while time.monotonic() < deadline:
                if stranger == "seating itself":
                    take_seats(intruder, ours, tried)
                await check(intruder, homes[:2], ours)
                await asyncio.sleep(0.1)
            start(2)
            # --deals 1: they play, then exit
            while any(process.poll() is None for process in processes):
                if stranger == "seating itself":
                    take_seats(intruder, ours, tried)
                await check(intruder, homes, ours)
                await asyncio.sleep(0.1)
        finally:
            await intruder.close()

    try:
        asyncio.run(asyncio.wait_for(attack(), 120))
    except BaseException:
        kill_all(processes)
        print(logs(tmp_path, len(processes)))
        raise
    assert [p.returncode for p in processes] == [0, 0, 0], logs(tmp_path, 3)
    sheets = [scores(home) for home in homes]
    assert all(sheet == sheets[0] for sheet in sheets)
    seats = sheets[0]["seats"]
    # the three of them, and no stranger
    assert isinstance(seats, list) and sorted(seats) == NAMES, sheets[0]
    told = logs(tmp_path, 3, tail=10**6)
    assert "its table id 00000000 is not derived from its opener's key and nonce" in told, told
    assert "not joining the offer of" in told
    if stranger == "seating itself":
        assert "refused the seats of" in told
    assert_no_traceback(tmp_path, 3)


def take_seats(intruder: Intruder, ours: set[bytes], tried: set[bytes]) -> None:
    """The stranger's second move: join every offer it hears (once each, in ``tried``), and
    seat itself at the head of its own offer once two daemons joined it, with its signature
    and coin."""
    for offer in intruder.heard_offers():
        if offer["table"] not in ours | tried and offer.get("state") == "open":
            tried.add(offer["table"])
            intruder.send(
                offer["opener"],
                {
                    "t": "join",
                    "table": offer["table"],
                    "members": [intruder.member.to_wire()],
                },
            )
    for table in ours - tried:
        joined = [Member(*raw) for _, join in intruder.joins(table) for raw in join["members"]]
        if len(joined) >= 2:
            tried.add(table)
            intruder.seat(table, "club", [intruder.member, *joined[:2]], [intruder.identity])


async def check(intruder: Intruder, homes: list[Path], ours: set[bytes]) -> None:
    """Nobody joined the stranger's offers, and no daemon plays at a table with it."""
    joins = [
        (d.hex()[:8], f["table"].hex()[:8])
        for d, f in intruder.received
        if f.get("t") == "join" and f["table"] in ours
    ]
    assert not joins, f"daemons joined the stranger's offer: {joins}"
    for home in homes:
        status = await answer(home, "status")
        assert not seated(status, "intrus"), f"{home.name} seated the stranger: {status}"


def test_a_manifest_with_more_members_than_seats_is_refused_and_the_next_one_starts_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim_port, port = free_ports(2)
    home = tmp_path / "d0"
    stranger = Identity.generate()
    argv = daemon_argv(
        home,
        "joueur0",
        victim_port,
        [],
        table=None,
        timeout=10,
        extra=[
            *("--peer", f"{stranger.public_key.hex()}@127.0.0.1:{port}"),
            *("--silence", "nothing"),  # the rule of the stranger's manifest, which says none
        ],
    )  # the stranger is its --peer
    processes = [spawn(argv, log_path(tmp_path, 0))]
    extra = [Identity.generate() for _ in range(2)]

    async def attack() -> None:
        rogue = Intruder(port, identity=stranger)
        sent: list[dict[str, Any]] = []
        send = rogue.send

        def sending(daemon: bytes, frame: dict[str, Any]) -> None:
            sent.append(frame)
            send(daemon, frame)

        monkeypatch.setattr(rogue, "send", sending)
        await rogue.start([(f"tcp://127.0.0.1:{victim_port}", home_key(home))])
        table = rogue.offer_opened("club", 3)["table"]
        try:
            listed = await until(
                "the offer listed", lambda: answer(home, "tables"), 30, tmp_path, 1
            )
            assert [t["table"] for t in listed] == [table.hex()]
            assert await answer(home, "join", table=table.hex()) == {"joined": True}
            ((_, join),) = await until("the join", lambda: rogue.joins(table), 15, tmp_path, 1)
            (victim,) = [Member(*raw) for raw in join["members"]]
            others = [
                Member(x.public_key, f"x{k}", rogue.key, rogue.endpoint)
                for k, x in enumerate(extra)
            ]
            # Four members for three seats, and three of the four signatures and coins.
            rogue.seat(table, "club", [rogue.member, victim, *others], [rogue.identity, extra[0]])

            async def settled() -> bool:
                state = {t["table"]: t["state"] for t in await answer(home, "tables") or []}.get(
                    table.hex()
                )
                return (
                    state != "open" or "refused the manifest" in log_path(tmp_path, 0).read_text()
                )

            await until("the manifest taken or refused", settled, 15, tmp_path, 1)
            tables = await answer(home, "tables")
            assert [t["state"] for t in tables] == ["open"], (
                f"the lobby took the manifest of four: {tables}"
            )
            assert "refused the manifest" in log_path(tmp_path, 0).read_text()
            assert "4 members for 3 seats" in log_path(tmp_path, 0).read_text()
            seated = [rogue.member, victim, others[0]]
            rogue.seat(table, "club", seated, [rogue.identity, extra[0]])

            def signs() -> list[dict[str, Any]]:
                return [f for f in sent + [f for _, f in rogue.received] if f.get("t") == "sign"]

            await until("the member's signature", lambda: len(signs()) > 4, 15, tmp_path, 1)
            commits = {f["key"]: f["commit"] for f in signs()}  # the last of each member
            document = seal_document(
                table, manifest_bytes(table, "club", seated), [commits[m.key] for m in seated]
            )
            seals = [[s.public_key, s.sign(document)] for s in (rogue.identity, extra[0])]
            rogue.send(victim.daemon, {"t": "seal", "table": table, "seals": seals})

            async def playing() -> Any:
                status = await answer(home, "status")
                return status["tables"] if status else None

            (started,) = await until("the table started", playing, 30, tmp_path, 1)
            assert started["seats"] == ["intrus", "joueur0", "x0"]
            told = log_path(tmp_path, 0).read_text()
            assert "intrus (" in told and "x0 (" in told, told
            assert "did not reveal its coin: the first dealer is drawn without it" in told
        finally:
            await rogue.close()

    try:
        asyncio.run(asyncio.wait_for(attack(), 90))
    finally:
        kill_all(processes)
    assert_no_traceback(tmp_path, 1)


def test_a_stranger_offering_40_tables_is_listed_unverified_and_capped(tmp_path: Path) -> None:
    """Issue 36, item 3: a stranger calling itself "alice" offers 40 tables (``club``,
    ``club1``, …) to a daemon waiting at its own ``club``.  The daemon's ``tables`` (what the
    client shows) keeps 3 of them, each ``verified: false``; its own offer is verified."""
    victim_port, port = free_ports(2)
    home = tmp_path / "d0"
    argv = daemon_argv(home, "joueur0", victim_port, [], table="club", seats=3, timeout=10)
    process = spawn(argv, log_path(tmp_path, 0))

    async def offer() -> list[dict[str, Any]]:
        await until("the daemon up", lambda: answer(home, "status"), 60, tmp_path, 1)
        intruder = Intruder(port, name="alice")
        await intruder.start([(f"tcp://127.0.0.1:{victim_port}", home_key(home))])
        try:
            await until("the link to the daemon", lambda: intruder.up, 30, tmp_path, 1)
            for n in range(40):
                intruder.offer_opened("club" if n == 0 else f"club{n}", 3)
            await until(
                "the offers heard",
                lambda: "ignored further offers from" in logs(tmp_path, 1, tail=10**6),
                30,
                tmp_path,
                1,
            )
            await asyncio.sleep(1.0)  # the rest of the 40 delivered
            tables: list[dict[str, Any]] = await answer(home, "tables")
            return tables
        finally:
            await intruder.close()

    try:
        tables = asyncio.run(asyncio.wait_for(offer(), 120))
    finally:
        kill_all([process])
    theirs = [t for t in tables if t["members"] == ["alice"]]
    ours = [t for t in tables if t["members"] == ["joueur0"]]
    assert len(theirs) == 3 and all(t["verified"] is False for t in theirs), tables
    assert len(ours) == 1 and ours[0]["verified"] is True
    assert logs(tmp_path, 1, tail=10**6).count("ignored further offers from") == 1
    assert_no_traceback(tmp_path, 1)
