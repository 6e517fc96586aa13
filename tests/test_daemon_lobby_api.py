"""A whole table from the local API alone, as the terminal client drives it: open a table,
add bot seats, answer every decision from the ``options`` the daemon offers, read the score
sheet, ask for the next deal.

One daemon hosts all three seats (the player and two bots added through the API), so the
test needs no network beyond its own Unix socket.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest
from daemons import (
    assert_no_traceback,
    daemon_argv,
    free_ports,
    kill_all,
    log_path,
    logs,
    scores,
    spawn,
    wait_all,
    wait_for_path,
)

from client.api import DaemonClient, DaemonRefused, DaemonUnavailable

pytestmark = pytest.mark.daemons


async def refused(client: DaemonClient, op: str, **params: Any) -> str:
    try:
        await client.request(op, **params)
    except DaemonRefused as error:
        return str(error)
    raise AssertionError(f"{op} {params} was accepted")


async def choose(
    client: DaemonClient, state: dict[str, Any], rng: random.Random, seen: dict[str, int]
) -> None:
    """One decision, picked among the daemon's own ``options`` only."""
    options, decision = state["options"], state["decision"]
    seen[decision] = seen.get(decision, 0) + 1
    if decision == "bidding":
        await client.request("bid", contract=rng.choice(options["bids"]))
    elif decision == "calling":
        await client.request("call", card=rng.choice(options["calls"]))
    elif decision == "ecart":
        ecart = options["ecart"]
        trumps = [c for c in ecart["allowed"] if c.startswith("T")]
        others = [c for c in ecart["allowed"] if not c.startswith("T")]
        chosen = (
            rng.sample(others, ecart["size"] - ecart["trumps_needed"])
            + trumps[: ecart["trumps_needed"]]
        )
        hand_trumps = [
            c for c in state["view"]["hand"] if c.startswith("T") and c not in ("T1", "T21")
        ]
        # a trump is refused while other cards may go
        if ecart["trumps_needed"] == 0 and hand_trumps:
            assert not trumps
            error = await refused(client, "ecart", cards=[*chosen[1:], hand_trumps[0]])
            assert "trump may go to the écart only when" in error
            seen["trump refused"] = 1
        await client.request("ecart", cards=chosen)
    elif decision == "chelem":
        await client.request("chelem", announce=False)
    else:
        poignee = options["poignee"]
        if poignee is not None:
            size, count = next(iter(poignee["sizes"].items()))
            shown = [c for c in poignee["trumps"] if c != "EX"][:count]
            if len(shown) == count:
                await client.request("poignee", cards=shown)
                seen[f"poignee {size}"] = 1
                return
        assert set(options["cards"]) == set(state["view"]["legal"]) and options["cards"]
        await client.request("play", card=rng.choice(options["cards"]))


async def play_table(home: Path, process: Any) -> tuple[dict[str, Any], dict[str, int]]:
    wait_for_path(home / "api.sock", process)
    client, observer = DaemonClient(home), DaemonClient(home)
    await client.connect()
    await observer.connect()
    events: list[dict[str, Any]] = []

    async def watch() -> None:
        async for event in observer.events():
            events.append(event)

    watcher = asyncio.create_task(watch())
    assert "open or join a table first" in await refused(client, "bot")
    assert "not at a table" in await refused(client, "next")
    await client.request("open", name="salon", seats=3)
    assert (await client.request("bot"))["bot"] == "moi-bot1"
    tables = await client.request("tables")
    assert [(t["name"], t["members"]) for t in tables] == [("salon", ["moi", "moi-bot1"])]
    await client.request("bot")
    rng, seen, deadline = random.Random(7), {}, asyncio.get_running_loop().time() + 120
    while True:
        assert asyncio.get_running_loop().time() < deadline, "the table got stuck"
        try:
            state = await client.request("state")
        except DaemonUnavailable:  # --deals 2: scored, saved, and the daemon has left
            break
        if state["table"] is None:
            await asyncio.sleep(0.05)
            continue
        assert state["seats"] == ["moi", "moi-bot1", "moi-bot2"] and len(state["fingerprints"]) == 3
        if state["between_deals"]:
            assert state["results"] and state["options"] is None and state["view"] is None
            last = state["last_view"]  # how the deal ended, for the screen between deals
            assert (
                last["seat"] == state["seat"] == 0
                and last["dealer"] == state["results"][-1]["dealer"]
            )
            assert len(last["tricks"]) == (24 if state["results"][-1]["contract"] else 0)
            assert "the table is full" in await refused(client, "bot")
            await client.request("next")
        elif state["decision"] is not None:
            await choose(client, state, rng, seen)
        else:
            if (
                state["view"] is not None
                and state["view"]["hand"]  # with no card left, the bots may end the deal now
                and state["options"] is None
                and not state["between_deals"]
            ):
                assert "not over" in await refused(client, "next")
            await asyncio.sleep(0.02)
    await client.close()
    watcher.cancel()
    await observer.close()
    hands = [e for e in events if e.get("event") == "hand"]
    plays = [e for e in events if e.get("event") == "play"]
    # One seat's events only: one hand per deal, each card played told once — not once per seat.
    assert len(hands) == 2 and len(plays) in (0, 72, 144), (len(hands), len(plays))
    return state, seen


def test_a_table_opened_and_filled_with_bots_through_the_api_plays_two_deals(
    tmp_path: Path,
) -> None:
    home = tmp_path / "d0"
    argv = daemon_argv(home, "moi", 0, [], bot=None, table=None, deals=2)
    process = spawn(argv, log_path(tmp_path, 0))
    try:
        last, seen = asyncio.run(asyncio.wait_for(play_table(home, process), 150))
        wait_all([process], tmp_path, timeout=20)  # --deals 2: scored, saved, gone
    except BaseException:
        kill_all([process])
        print(logs(tmp_path, 1))
        raise
    sheet = scores(home)
    assert sheet["deals"][:1] == last["results"][:1]  # what the player read between the deals
    assert sheet["seats"] == ["moi", "moi-bot1", "moi-bot2"] and len(sheet["deals"]) == 2
    assert all(deal["audit"] == "ok" for deal in sheet["deals"])
    assert all(sum(deal["scores"]) == 0 for deal in sheet["deals"])
    played = [deal for deal in sheet["deals"] if deal["contract"] is not None]
    assert seen.get("bidding", 0) >= 2 and seen.get("playing", 0) >= 24 * len(played)
    assert_no_traceback(tmp_path, 1)


def test_a_daemon_at_its_table_limit_refuses_to_open_or_join_another(tmp_path: Path) -> None:
    home = tmp_path / "d0"
    extra = ["--bots", "2", "--max-tables", "1"]
    argv = daemon_argv(home, "moi", 0, [], bot="basic", table="club", seats=3, extra=extra)
    process = spawn(argv, log_path(tmp_path, 0))

    async def knock() -> None:
        wait_for_path(home / "api.sock", process)
        client = DaemonClient(home)
        await client.connect()
        while (await client.request("state"))["table"] is None:  # its own three seats start a table
            await asyncio.sleep(0.05)
        assert "its limit (tarotd --max-tables)" in await refused(
            client, "open", name="autre", seats=3
        )
        assert "its limit" in await refused(client, "join", table="00" * 16)
        # --bot: no moves from a client
        assert "played by a bot" in await refused(client, "play", card="EX")
        assert [t["name"] for t in await client.request("tables")] == ["club"]
        await client.close()

    try:
        asyncio.run(asyncio.wait_for(knock(), 60))
    finally:
        kill_all([process])
    assert "Traceback" not in log_path(tmp_path, 0).read_text()


def test_a_strangers_table_is_listed_unverified_and_joined_only_with_its_code(
    tmp_path: Path,
) -> None:
    """Two daemons that do not list each other: the joiner sees the opener's table marked
    unverified; a join without the code, or with a wrong or weak one, is refused, saying why; with
    the right code (a run of CPace with the opener) it is seated, and the table verified."""
    homes = [tmp_path / "d0", tmp_path / "d1"]
    opener_port, joiner_port = free_ports(2)
    # The opener names the joiner (--peer KEY@HOST:PORT, no discovery on loopback): that is how
    # they meet.  The joiner names nobody, so the opener's offer is a stranger's to it.
    argv = daemon_argv(homes[0], "ana", opener_port, [(homes[1], joiner_port)], bot=None, seats=3)
    processes = [spawn([*argv, "--invite", "H4NP-3WRC"], log_path(tmp_path, 0))]
    joiner = daemon_argv(homes[1], "bob", joiner_port, [], bot=None, table=None)
    processes.append(spawn(joiner, log_path(tmp_path, 1)))

    async def join() -> dict[str, Any]:
        wait_for_path(homes[1] / "api.sock", processes[1])
        client = DaemonClient(homes[1])
        await client.connect()
        seen: dict[str, Any] = {}
        while not (tables := await client.request("tables")):
            await asyncio.sleep(0.1)
        (table,) = tables
        seen["before"] = table
        seen["no code"] = await refused(client, "join", table=table["table"])
        seen["weak"] = await refused(client, "join", table=table["table"], invite="TR10-7777")
        seen["wrong"] = await refused(client, "join", table=table["table"], invite="H4NP-3WRD")
        await asyncio.sleep(1.0)  # the opener makes this key wait 0.5 s after a wrong code
        seen["right"] = await client.request("join", table=table["table"], invite="h4np 3wrc")
        while "bob" not in (table := (await client.request("tables"))[0])["members"]:
            await asyncio.sleep(0.1)
        seen["after"] = table
        await client.close()
        return seen

    try:
        seen = asyncio.run(asyncio.wait_for(join(), 90))
    except BaseException:
        kill_all(processes)
        print(logs(tmp_path, 2))
        raise
    finally:
        kill_all(processes)
    print(seen)
    assert seen["before"]["verified"] is False and seen["before"]["invite"] is None
    assert "opened by a daemon you do not know" in seen["no code"]
    assert "is too easy to guess" in seen["weak"]
    assert "is not the invite code of the table 'club'" in seen["wrong"]
    assert seen["right"] == {"joined": True}
    assert seen["after"]["members"] == ["ana", "bob"] and seen["after"]["verified"] is True
