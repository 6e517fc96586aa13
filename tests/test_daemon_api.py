"""The local API of real ``tarotd`` processes: only the daemon's own Unix user gets in, a
client that drops and comes back gets its seat's whole state, and bad requests get an error
and change nothing.

The human seat is played by this test through the API, exactly as the terminal client does:
it asks for ``state`` and answers each decision with a legal action from the view.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from daemons import (
    assert_no_traceback,
    daemon_argv,
    kill_all,
    log_path,
    logs,
    scores,
    spawn,
    start_daemons,
    stop,
    wait_all,
    wait_for_path,
)

from client.api import DaemonClient, DaemonRefused, ask
from protocol.rules.cards import DECK
from tarotd.api import MAX_CLIENTS, MAX_LINE, ApiServer

pytestmark = pytest.mark.daemons

NOBODY = 65534  #: uid and gid of ``nobody``
CARDS_PER_HAND = 24  #: at three players

needs_root = pytest.mark.skipif(
    sys.platform != "linux" or os.geteuid() != 0,
    reason="needs root on Linux: the test becomes another Unix user (nobody) to knock on the "
    "socket",
)


# --------------------------------------------------------------------------- another user


def _knock(path: Path, request: bytes) -> str:
    """In the child, as ``nobody``: connect, send a request, and say what happened."""
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)
    if os.getuid() != NOBODY or os.geteuid() != NOBODY:
        return "still root"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(5)
    try:
        sock.connect(str(path))
    except PermissionError:
        return "denied"
    except OSError as error:
        return f"connect failed: {error}"
    try:
        sock.sendall(request)
    except OSError:
        pass  # already closed on us: the read below says so
    data = b""
    try:
        while chunk := sock.recv(4096):
            data += chunk
    except TimeoutError:
        return f"still open after 5 s, received {data!r}"
    except ConnectionResetError:
        pass
    return "closed" if not data else f"answered {data!r}"


def fork_as_nobody(path: Path, request: bytes = b'{"id": 1, "op": "status"}\n') -> tuple[int, int]:
    """Fork a child that becomes ``nobody`` and knocks on ``path``; (pid, read end of the
    pipe its outcome comes back on).  The child never returns into the caller's code."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: plain system calls only, then out
        try:
            os.close(read)
            try:
                outcome = _knock(path, request)
            except BaseException as error:  # reported to the parent
                outcome = f"child failed: {error!r}"
            os.write(write, outcome.encode()[:4000])
        finally:
            os._exit(0)
    os.close(write)
    return pid, read


def outcome_of(pid: int, read: int) -> str:
    chunks = []
    while chunk := os.read(read, 4096):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    return b"".join(chunks).decode()


def knock_as_nobody(path: Path) -> str:
    return outcome_of(*fork_as_nobody(path))


def world_open_directory() -> Path:
    """A directory ``nobody`` can reach (pytest's tmp_path sits in a 0700 directory)."""
    directory = Path(tempfile.mkdtemp(prefix="tarot-api-", dir="/tmp"))
    os.chmod(directory, 0o777)
    return directory


@needs_root
def test_api_server_closes_a_connection_from_another_user_whatever_the_file_modes() -> None:
    """SO_PEERCRED alone: socket and directory opened to everyone after start, ``nobody``
    connects, sends a request and is closed without a byte of answer; the handler never runs."""
    handled: list[dict[str, Any]] = []

    async def handler(request: dict[str, Any]) -> Any:
        handled.append(request)
        return {"name": "test"}

    async def main() -> None:
        directory = world_open_directory()
        path = directory / "api.sock"
        server = ApiServer(path, handler)
        await server.start()
        try:
            assert path.stat().st_mode & 0o777 == 0o600
            os.chmod(directory, 0o777)
            os.chmod(path, 0o666)
            pid, read = fork_as_nobody(path)
            outcome = await asyncio.to_thread(outcome_of, pid, read)
            assert outcome == "closed"
            assert server.refused == 1
            assert handled == []
            # The daemon's own user is served on the very same socket.
            reader, writer = await asyncio.open_unix_connection(str(path))
            writer.write(b'{"id": 2, "op": "status"}\n')
            reply = json.loads(await asyncio.wait_for(reader.readline(), 5))
            writer.close()
            assert reply == {"id": 2, "ok": True, "result": {"name": "test"}}
            assert server.refused == 1 and len(handled) == 1
        finally:
            await server.close()
            shutil.rmtree(directory)

    asyncio.run(main())


def test_a_client_beyond_the_places_is_told_why_and_a_place_freed_serves_it(tmp_path: Path) -> None:
    """Only the daemon's own user can take every place (its own scripts or windows): the one
    turned away gets one error line saying so, which ``tarot`` shows, not a silent close."""

    async def handler(request: dict[str, Any]) -> Any:
        return {"name": "test"}

    async def main() -> None:
        server = ApiServer(tmp_path / "api.sock", handler)
        await server.start()
        held = [
            await asyncio.open_unix_connection(str(tmp_path / "api.sock"))
            for _ in range(MAX_CLIENTS)
        ]
        try:
            await asyncio.sleep(0.1)
            with pytest.raises(
                DaemonRefused, match=f"already serves {MAX_CLIENTS} clients of yours"
            ) as refused:
                await ask(tmp_path, "status")
            assert refused.value.code == "too-many-clients"
            assert refused.value.params == {"limit": MAX_CLIENTS}
            held.pop()[1].close()
            await asyncio.sleep(0.1)
            assert await ask(tmp_path, "status") == {"name": "test"}
        finally:
            for _, writer in held:
                writer.close()
            await server.close()

    asyncio.run(main())


@needs_root
def test_the_daemon_socket_is_out_of_reach_of_another_user(tmp_path: Path) -> None:
    """A real daemon: ``nobody`` cannot even reach ``api.sock`` (0600 in a 0700 home); and
    through a hard link in an open directory, with the socket made 0666, it is let in by the
    kernel and closed at once by the daemon's SO_PEERCRED check."""
    home = tmp_path / "d0"
    process = spawn(daemon_argv(home, "joueur0", 0, [], table=None), log_path(tmp_path, 0))
    directory = world_open_directory()
    try:
        path = home / "api.sock"
        wait_for_path(path, process)
        assert path.stat().st_mode & 0o777 == 0o600
        assert home.stat().st_mode & 0o777 == 0o700
        assert knock_as_nobody(path) == "denied"

        link = directory / "api.sock"
        os.link(path, link)  # the same socket inode, in a directory anybody may enter
        os.chmod(path, 0o666)
        try:
            outcome = knock_as_nobody(link)
        finally:
            os.chmod(path, 0o600)
        assert outcome == "closed"
        assert "refused a local API connection" in log_path(tmp_path, 0).read_text()
        status = asyncio.run(ask(home, "status"))  # its own user still gets answers
        assert status["name"] == "joueur0"
        assert stop(process) == 0
    finally:
        kill_all([process])
        shutil.rmtree(directory)
    assert_no_traceback(tmp_path, 1)


# --------------------------------------------------------------------------- a human seat


async def raw_exchange(
    path: Path, payload: bytes, answers: int, timeout: float = 10
) -> tuple[list[dict[str, Any]], bool]:
    """Send raw bytes on a connection of their own; the first ``answers`` responses (events
    skipped) and whether the daemon then closed the connection."""
    reader, writer = await asyncio.open_unix_connection(str(path), limit=1 << 22)
    try:
        writer.write(payload)
        try:
            await writer.drain()
        except ConnectionError:
            pass  # it closed on us: what it said before is still to be read
        replies: list[dict[str, Any]] = []
        closed = False
        while len(replies) < answers:
            line = await asyncio.wait_for(reader.readline(), timeout)
            if not line:
                closed = True
                break
            message = json.loads(line)
            if "event" not in message:
                replies.append(message)
        return replies, closed
    finally:
        writer.close()


BAD_LINES: list[tuple[bytes, str, object]] = [
    (b"hello\n", "not a JSON object", None),
    (b"\xff\xfe\xfa garbage\n", "not a JSON object", None),
    (b"[1, 2]\n", 'a request is a JSON object with an "op"', None),
    (b'"status"\n', 'a request is a JSON object with an "op"', None),
    (b"42\n", 'a request is a JSON object with an "op"', None),
    (b'{"id": 3}\n', 'a request is a JSON object with an "op"', None),
    (b'{"id": 4, "op": 7}\n', 'a request is a JSON object with an "op"', None),
    (b"[" * 5000 + b"\n", "not a JSON object", None),
    (b'{"id": 5, "op": "status", "n": ' + b"9" * 5000 + b"}\n", "not a JSON object", None),
    (b'{"id": 6, "op": "dance"}\n', "unknown request 'dance'", 6),
    (b'{"id": "\\ud800", "op": "dance"}\n', "unknown request 'dance'", "\ud800"),
    (b'{"id": 7, "op": "join", "table": "zz"}\n', "table id", 7),
    (b'{"id": 8, "op": "join", "table": "' + b"00" * 16 + b'"}\n', "no open table with this id", 8),
    (b'{"id": 9, "op": "open", "name": "x", "seats": "many"}\n', "seats", 9),
    (b'{"id": 10, "op": "open", "name": "x", "seats": 9}\n', "a table has 3, 4 or 5 seats", 10),
    (b'{"id": 11, "op": "open", "name": "\\udfff", "seats": 3}\n', "name", 11),
    (b'{"id": 12, "op": "bid", "contract": "grande"}\n', "", 12),
    (b'{"id": 13, "op": "ecart", "cards": "KH"}\n', "", 13),
]
"""Lines that must each get an error response with a clear message (a substring of it),
answering the request's id when it had one."""


async def bad_requests(path: Path) -> None:
    payload = b"".join(line for line, _, _ in BAD_LINES) + b'{"id": 99, "op": "status"}\n'
    replies, closed = await raw_exchange(path, payload, len(BAD_LINES) + 1)
    assert not closed and len(replies) == len(BAD_LINES) + 1, replies
    for (line, expected, number), reply in zip(BAD_LINES, replies):
        assert reply["ok"] is False, (line[:60], reply)
        assert expected in reply["error"], (line[:60], reply)
        assert "internal error" not in reply["error"], (line[:60], reply)
        assert reply.get("id") == number, (line[:60], reply)
    assert replies[-1]["ok"] is True and replies[-1]["id"] == 99  # the same connection still serves


async def oversized_line(path: Path) -> None:
    """A line over 64 KiB: an error saying so, or the connection closed; nothing else."""
    payload = b'{"op": "status", "pad": "' + b"x" * (MAX_LINE + 10_000) + b'"}\n'
    replies, closed = await raw_exchange(path, payload, 1)
    if replies:
        assert replies[0]["ok"] is False and f"longer than {MAX_LINE}" in replies[0]["error"]
        assert replies[0]["code"] == "line-too-long" and replies[0]["params"] == {"limit": MAX_LINE}
        replies, closed = [], True  # and the daemon must hang up after it
    assert closed


def played(view: dict[str, Any]) -> list[str]:
    """Every card played in the deal so far, in the order played."""
    return [code for trick in view["tricks"] for code in trick["cards"]] + list(view["current"])


def own_plays(view: dict[str, Any], seat: int) -> list[str]:
    """The cards ``seat`` played: the k-th card of a trick is its leader's k-th neighbour's."""
    players = view["players"]
    tricks = [*view["tricks"], {"leader": view["leader"], "cards": view["current"]}]
    return [
        code
        for t in tricks
        for k, code in enumerate(t["cards"])
        if (t["leader"] + k) % players == seat
    ]


class Human:
    """The test at the human seat: one client connection to its daemon, a seeded chooser."""

    def __init__(self, home: Path, rng: random.Random) -> None:
        self.home = home
        self.rng = rng
        self.client = DaemonClient(home)

    async def connect(self) -> None:
        self.client = DaemonClient(self.home)
        await self.client.connect()

    async def state(self) -> dict[str, Any]:
        result: dict[str, Any] = await self.client.request("state")
        return result

    async def decide(self, state: dict[str, Any]) -> bool:
        """Take the decision the seat owes, if any (True if it acted)."""
        decision, view = state.get("decision"), state.get("view")
        if decision is None or view is None:
            return False
        if decision == "bidding":
            taken = any(b["contract"] == "garde-contre" for b in view["bids"])
            await self.client.request("bid", contract="pass" if taken else "garde-contre")
        elif decision == "chelem":
            await self.client.request("chelem", announce=False)
        elif decision == "playing":
            await self.client.request("play", card=self.rng.choice(view["legal"]))
        else:
            raise AssertionError(
                f"no decision {decision!r} expected at three with a garde contre: {view}"
            )
        return True

    async def play_until(
        self, done: Callable[[dict[str, Any]], bool], timeout: float = 40
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            state = await self.state()
            if done(state):
                return state
            if not await self.decide(state):
                assert time.monotonic() < deadline, f"stuck: {state}"
                await asyncio.sleep(0.02)


async def state_of(home: Path) -> dict[str, Any]:
    result: dict[str, Any] = await ask(home, "state")
    return result


async def refused(client: DaemonClient, op: str, **params: Any) -> str:
    with pytest.raises(DaemonRefused) as error:
        await client.request(op, **params)
    return str(error.value)


async def human_game(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]], homes: list[Path]
) -> dict[str, Any]:
    rng = random.Random(20261130)
    api = homes[0] / "api.sock"
    wait_for_path(api, processes[0])
    await bad_requests(api)
    await oversized_line(api)

    human = Human(homes[0], rng)
    await human.connect()
    observer = DaemonClient(homes[0])  # stays connected: every event of the deal
    await observer.connect()
    seen: list[str] = []

    async def watch() -> None:
        async for event in observer.events():
            if event.get("event") == "play":
                seen.append(event["card"])

    watcher = asyncio.create_task(watch())

    # Mid-deal, at our turn with a bot after us in the trick: bad plays first.
    def mid_deal(state: dict[str, Any]) -> bool:
        view = state.get("view")
        return (
            state.get("decision") == "playing"
            and view is not None
            and len(view["tricks"]) >= 3
            and len(view["current"]) < 2
        )

    before = await human.play_until(mid_deal)
    view = before["view"]
    seat = before["seat"]
    seen_here = set(played(view)) | set(view["hand"])
    # another hand's, or the chien's
    elsewhere = next(c.code for c in DECK if c.code not in seen_here)
    assert "is not a card" in await refused(human.client, "play", card="ZZ")
    assert "is not a card" in await refused(human.client, "play")
    assert await refused(human.client, "play", card=elsewhere)
    illegal = [code for code in view["hand"] if code not in view["legal"]]
    if illegal:
        assert await refused(human.client, "play", card=illegal[0])
    assert await refused(human.client, "bid", contract="garde")
    assert "cards" in await refused(human.client, "poignee", cards="T1 T2")
    assert await human.state() == before  # nothing changed

    # Stop both bots' daemons, play, and try to play again out of turn.
    others = [1, 2]
    for i in others:
        os.kill(processes[i].pid, signal.SIGSTOP)
    try:
        card = rng.choice(view["legal"])
        await human.client.request("play", card=card)
        last = await human.state()
        assert last["decision"] is None and last["view"]["to_act"] != seat
        assert played(last["view"]) == [*played(view), card]
        assert "not this seat's turn" in await refused(
            human.client, "play", card=last["view"]["hand"][0]
        )
        assert await human.state() == last
        await human.client.close()  # the player's client drops ...
    finally:
        for i in others:
            os.kill(processes[i].pid, signal.SIGCONT)

    # ... the bots play on meanwhile, until it is our turn again at every daemon ...
    names = last["seats"]
    deadline = time.monotonic() + 20
    while True:
        bot_views = [(await state_of(homes[i]))["view"] for i in others]
        if all(
            v is not None and v["to_act"] == seat and len(played(v)) > len(played(last["view"]))
            for v in bot_views
        ):
            break
        assert time.monotonic() < deadline, bot_views
        await asyncio.sleep(0.05)

    # ... and the client comes back: the whole state of its seat.
    await human.connect()
    deadline = time.monotonic() + 10
    while (again := await human.state())["decision"] != "playing":
        assert time.monotonic() < deadline, again
        await asyncio.sleep(0.02)
    now = again["view"]
    assert (again["table"], again["seat"], again["deal"], again["seats"]) == (
        last["table"],
        seat,
        0,
        names,
    )
    assert again["scores"] == last["scores"] and again["results"] == last["results"] == []
    assert now["phase"] == "playing" and now["to_act"] == seat
    assert now["hand"] == last["view"]["hand"]  # nothing of ours moved while away
    assert (now["taker"], now["contract"], now["bids"], now["dealer"]) == (
        view["taker"],
        view["contract"],
        view["bids"],
        view["dealer"],
    )
    assert played(now)[: len(played(last["view"]))] == played(last["view"])
    assert len(played(now)) > len(played(last["view"]))
    assert now["tricks"][: len(last["view"]["tricks"])] == last["view"]["tricks"]
    assert set(now["legal"]) <= set(now["hand"]) and now["legal"]
    assert len(now["hand"]) + len(own_plays(now, seat)) == CARDS_PER_HAND
    assert len(set(played(now)) | set(now["hand"])) == len(played(now)) + len(now["hand"])
    for bot_view in bot_views:  # the public record is the same at every seat
        assert (bot_view["tricks"], bot_view["current"], bot_view["leader"]) == (
            now["tricks"],
            now["current"],
            now["leader"],
        )
    deadline = time.monotonic() + 5
    while len(seen) < len(played(now)):
        assert time.monotonic() < deadline, (seen, played(now))
        await asyncio.sleep(0.02)
    assert seen == played(now)  # and it is what the event stream told a client that stayed

    # Finish the deal through the API.
    final = await human.play_until(lambda state: len(state["results"]) >= 1)
    sheet: dict[str, Any] = await human.client.request("scores")
    # deal 1: nobody to play with
    assert "not this seat's turn" in await refused(human.client, "play", card="KH")
    assert (await human.client.request("status"))["name"] == "joueur0"
    await human.client.close()
    watcher.cancel()
    await observer.close()
    assert final["results"][0]["audit"] == "ok"
    return sheet


def test_a_human_seat_through_the_api_reconnects_and_finishes_the_deal(tmp_path: Path) -> None:
    processes, homes = start_daemons(tmp_path, 3, 1, humans=[0], human_deals=None, timeout=30)
    try:
        sheet = asyncio.run(asyncio.wait_for(human_game(tmp_path, processes, homes), 75))
        wait_all(processes[1:], tmp_path, timeout=30)  # the bots' daemons played their one deal
        assert stop(processes[0]) == 0
    except BaseException:
        kill_all(processes)
        print(logs(tmp_path, 3))
        raise
    sheets = [scores(home) for home in homes]
    assert sheets[1] == sheets[2] == sheet
    assert sheets[0]["deals"] == sheet["deals"] and sheets[0]["totals"] == sheet["totals"]
    deals = sheet["deals"]
    assert len(deals) == 1 and deals[0]["audit"] == "ok" and sum(deals[0]["scores"]) == 0
    assert_no_traceback(tmp_path, 3)
