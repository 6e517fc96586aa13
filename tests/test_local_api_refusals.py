"""The daemon's refusals reach its client as codes (issue 38, item 4): each request refused
through the real request path — the API server's answer to a JSON line, the dispatcher, the
handler and the lobby, event desk, runner or rules behind it — carries a
:class:`~protocol.refusal.Refusal` code with every parameter that code names, beside its
English text; and the client says each code in French and in English, with all its
parameters, never from the English words."""

from __future__ import annotations

import asyncio
import functools
import json
import string
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import msgpack
import pytest

from client.api import DaemonRefused
from client.tui.i18n import _TEXT, LANGUAGES, Texts, refusal_key, rule_key
from protocol.localapi import Reply
from protocol.refusal import Refusal, rule_error, rule_params
from protocol.replication.identity import Identity
from protocol.replication.manifest import SilenceCost
from protocol.rules.cards import Suit, card, cards
from protocol.rules.deal import Phase
from protocol.rules.rules import Rule, RuleError, play_refusal
from protocol.rules.variants import Contract, PoigneeSize
from tarotd.answers import Answers
from tarotd.api import ApiServer
from tarotd.event_bots import EventBots
from tarotd.event_desk import EventDesk
from tarotd.event_glue import EventGlue
from tarotd.lobby import Lobby
from tarotd.regroup import Regroup
from tarotd.runner import TableRunner
from tarotd.store import Store

TABLE = bytes(16)


def fields(text: str) -> set[str]:
    """The parameters a sentence uses."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


# --- The words: every code, both languages, every parameter ---------------------------------


@pytest.mark.parametrize("refusal", [r for r in Refusal if r not in (Refusal.RULE, Refusal.OTHER)])
def test_every_refusal_is_said_in_both_languages_with_all_its_parameters(
    refusal: Refusal,
) -> None:
    for lang in LANGUAGES:
        text = _TEXT[lang].get(refusal_key(refusal))
        assert text is not None, f"{refusal} has no words in {lang}"
        assert fields(text) == set(refusal.params), (lang, refusal, text)
        said = Texts(lang).refusal("the daemon's English", refusal.value, _example(refusal))
        assert "the daemon's English" not in said


@pytest.mark.parametrize("rule", list(Rule))
def test_every_rule_is_said_in_both_languages_with_the_same_parameters(rule: Rule) -> None:
    assert fields(_TEXT["fr"][rule_key(rule)]) == fields(_TEXT["en"][rule_key(rule)])


def _example(refusal: Refusal) -> dict[str, object]:
    return {name: f"<{name}>" for name in refusal.params}


def test_a_refusal_falls_back_to_the_daemons_english_only_when_it_cannot_say_it() -> None:
    fr = Texts("fr")
    assert fr.refusal("a newer daemon's words", "a-newer-code", {}) == (
        "Refusé : a newer daemon's words"
    )
    assert fr.refusal("an older daemon's words") == "Refusé : an older daemon's words"
    assert fr.refusal("no seconds said", "nobody-gone", {}) == "Refusé : no seconds said"
    assert fr.refusal("a rule unknown", "rule", {"rule": "a-newer-rule"}) == (
        "Refusé : a rule unknown"
    )
    assert fr.refusal("a card unread", "rule", {"rule": "not-in-hand", "card": "ZZ"}) == (
        "Refusé : a card unread"
    )


@pytest.mark.parametrize(
    "error",
    [
        RuleError("", Rule.NOT_IN_HAND, card=card("KH")),
        RuleError("", Rule.FOLLOW_SUIT, suit=Suit.HEARTS),
        RuleError("", Rule.CALLED_SUIT_LEAD, suit=None),
        RuleError("", Rule.OVERTRUMP, rank=14),
        RuleError("", Rule.NOT_YOUR_TURN, seat=1, to_act=3),
        RuleError("", Rule.BID_NOT_HIGHER, highest=Contract.GARDE),
        RuleError("", Rule.BID_NOT_HIGHER, highest=None),
        RuleError("", Rule.WRONG_PHASE, expected=Phase.ECART, phase=Phase.PLAYING),
        RuleError("", Rule.POIGNEE_TOO_FEW, size=PoigneeSize.DOUBLE),
        RuleError("", Rule.POIGNEE_SIZE, counts="8/10/13", players=4),
        RuleError("", Rule.ECART_SIZE, size=6),
    ],
)
def test_a_rule_refusal_crosses_the_wire_whole(error: RuleError) -> None:
    wired = json.loads(json.dumps(rule_params(error)))
    back = rule_error(str(error), wired)
    assert back is not None and back.code is error.code and back.params == error.params
    for lang in LANGUAGES:
        assert Texts(lang).refusal(str(error), "rule", wired) == Texts(lang).rule(error)


def test_a_rule_refusal_with_no_code_is_the_daemons_text_as_any_refusal() -> None:
    """A seat's own machine refuses by text only (its Rule.OTHER): shown as the daemon said it,
    as a refusal."""
    error = RuleError("it is not this seat's turn to decide")
    assert Texts("fr").refusal(str(error), "rule", rule_params(error)) == (
        "Refusé : it is not this seat's turn to decide"
    )


# --- The request path: what the daemon sends for each refusal --------------------------------


def reply(daemon: object, line: bytes | dict[str, Any]) -> Reply:
    """The API server's answer to one line, its handler the dispatcher over ``daemon``."""
    server = ApiServer(Path("unused"), Answers(cast(Any, daemon)))
    raw = line if isinstance(line, bytes) else json.dumps(line).encode()
    return asyncio.run(server._answer(raw))


def said(answer: Reply, lang: str) -> str:
    """What the client shows of a refusal, as it reads it off the wire."""
    refused = DaemonRefused.of(json.loads(json.dumps(answer)), "?")
    return Texts(lang).refusal(str(refused), refused.code, refused.params)


def _broken() -> Any:
    raise RuntimeError("a bug")


def _runner(**state: Any) -> SimpleNamespace:
    """A table's runner: its real ``act`` and ``next_deal`` over the state given."""
    runner = SimpleNamespace(table_id=TABLE, bots=set(), **state)
    runner.act = functools.partial(TableRunner.act, cast(Any, runner))
    runner.next_deal = functools.partial(TableRunner.next_deal, cast(Any, runner))
    return runner


def _at_table(runner: Any, seat: int | None = 0, moved: bool = True, **daemon: Any) -> Any:
    def drive(_: Any, move: Callable[[], object]) -> bool:
        move()
        return moved

    hosting = SimpleNamespace(
        current=lambda: runner,
        own_seat=lambda _: seat,
        drive=drive,
        paused={TABLE: SimpleNamespace(refusal="the table is paused: the disk is full")},
    )
    return SimpleNamespace(hosting=hosting, **daemon)


def _refusing(error: RuleError) -> SimpleNamespace:
    def act(seat: int, action: object) -> None:
        raise error

    return SimpleNamespace(table_id=TABLE, bots=set(), act=act)


def _regrouping(away: dict[int, float] | None, seats: int) -> Any:
    """A daemon at a table of ``seats``, its members silent as long as ``away`` says (None:
    at no table), going on without the gone ones (the real :class:`Regroup`)."""
    runner = (
        None
        if away is None
        else SimpleNamespace(
            table_id=TABLE,
            ready=SimpleNamespace(
                setup=SimpleNamespace(names=[f"p{k}" for k in range(seats)]),
                members=list(range(seats)),
            ),
        )
    )
    daemon = SimpleNamespace(
        hosting=SimpleNamespace(current=lambda: runner),
        options=SimpleNamespace(timeout=20.0),
        peers=SimpleNamespace(away=lambda _: away),
        events=SimpleNamespace(seating_of=lambda _: None),
    )
    daemon.regroup = Regroup(cast(Any, daemon))
    return daemon


def _moving() -> SimpleNamespace:
    return SimpleNamespace(table_id=TABLE, bots=set(), act=lambda seat, action: [])


def _with(lobby: object) -> Any:
    """A daemon with room for a table, in ``lobby``."""
    return SimpleNamespace(
        lobby=lobby,
        send_lobby=lambda outs: None,
        peers=SimpleNamespace(learn_keys=lambda: None),
        hosting=SimpleNamespace(playing=lambda: 0, start_ready_tables=lambda: None),
        options=SimpleNamespace(max_tables=4, timeout=1.0),
    )


def _knocked(answer: str) -> Any:
    """A daemon whose join by invite code its opener answered with ``answer``."""
    offer = SimpleNamespace(name="salon", refused=answer)
    lobby = SimpleNamespace(
        join=lambda table, invite: [],
        proving=lambda table: False,
        refusal=lambda table: f"the opener of the table 'salon' said {answer}",
        offers={TABLE: offer},
    )
    return _with(lobby)


#: A join with an invite code, which the table's opener answers.
KNOCK = {"op": "join", "table": TABLE.hex(), "invite": "K"}

#: A daemon and a request for each refusal of the table, the request and the lobby's answers.
TABLE_CASES: list[tuple[Refusal, Callable[[], Any], bytes | dict[str, Any]]] = [
    (Refusal.NOT_JSON, SimpleNamespace, b"{nope"),
    (Refusal.NOT_A_REQUEST, SimpleNamespace, b'["play"]'),
    (Refusal.UNKNOWN_REQUEST, SimpleNamespace, {"op": "deal"}),
    (Refusal.MALFORMED, SimpleNamespace, {"op": "open", "seats": "five"}),
    (Refusal.MALFORMED, SimpleNamespace, {"op": "play", "card": "ZZ"}),
    (
        Refusal.INTERNAL,
        lambda: SimpleNamespace(peers=SimpleNamespace(status=_broken)),
        {"op": "status"},
    ),
    (
        Refusal.NOT_AT_TABLE,
        lambda: SimpleNamespace(hosting=SimpleNamespace(current=lambda: None)),
        {"op": "play", "card": "KH"},
    ),
    (Refusal.NOT_AT_TABLE, lambda: _regrouping(None, 3), {"op": "regroup"}),
    (Refusal.NO_OWN_SEAT, lambda: _at_table(_runner(), seat=None), {"op": "play", "card": "KH"}),
    (
        Refusal.SEAT_IS_A_BOT,
        lambda: _at_table(SimpleNamespace(table_id=TABLE, bots={0})),
        {"op": "bid", "contract": "garde"},
    ),
    (
        Refusal.RULE,
        lambda: _at_table(
            _refusing(cast(RuleError, play_refusal(cards("5S T2"), cards("7S"), card("T2"))))
        ),
        {"op": "play", "card": "T2"},
    ),
    (
        Refusal.NOT_PLAYED_HERE,
        lambda: _at_table(_runner(hosted_seats=set(), machines={})),
        {"op": "play", "card": "KH"},
    ),
    (
        Refusal.DEAL_SCORED,
        lambda: _at_table(_runner(hosted_seats={0}, machines={}, between_deals=True)),
        {"op": "play", "card": "KH"},
    ),
    (
        Refusal.TABLE_FINISHED,
        lambda: _at_table(_runner(hosted_seats={0}, machines={}, between_deals=False)),
        {"op": "chelem", "announce": True},
    ),
    (
        Refusal.TABLE_FINISHED,
        lambda: _at_table(_runner(finished=True, between_deals=True)),
        {"op": "next"},
    ),
    (
        Refusal.DEAL_NOT_SCORED,
        lambda: _at_table(_runner(finished=False, between_deals=False)),
        {"op": "next"},
    ),
    (
        Refusal.PAUSED,
        lambda: _at_table(_moving(), moved=False),
        {"op": "play", "card": "KH"},
    ),
    (
        Refusal.MAX_TABLES,
        lambda: SimpleNamespace(
            hosting=SimpleNamespace(playing=lambda: 2), options=SimpleNamespace(max_tables=2)
        ),
        {"op": "open", "name": "salon", "seats": 4},
    ),
    (Refusal.NOBODY_GONE, lambda: _regrouping({1: 3.0}, 4), {"op": "regroup"}),
    (Refusal.TOO_FEW_LEFT, lambda: _regrouping({1: 30.0, 2: 25.0}, 4), {"op": "regroup"}),
    *(
        (refusal, functools.partial(_knocked, answer), KNOCK)
        for refusal, answer in (
            (Refusal.INVITE_WAIT, "wait"),
            (Refusal.INVITE_LOCKED, "locked"),
            (Refusal.INVITE_REFUSED, "code"),
            (Refusal.INVITE_REFUSED, "silent"),
        )
    ),
]


# Events: an organiser's desk and the desks of players who heard its event, for real.


class Club:
    """An organiser's daemon and three players' ones, their event desks real (each with its
    store), frames between them delivered at once; the rest of each daemon a stand-in."""

    def __init__(self, tmp_path: Path) -> None:
        self.daemons: list[Any] = []
        for n in range(4):
            identity = Identity.generate()
            store = Store(tmp_path / f"{n}.db")
            daemon = SimpleNamespace(
                identity=identity,
                events=EventDesk(identity, lambda n=n: f"tcp://127.0.0.1:{9300 + n}", store),
                options=SimpleNamespace(
                    name="joueur", silence=SilenceCost.NOTHING, bot_level="basic"
                ),
                mesh=SimpleNamespace(
                    peers=list, send=self._sender(identity.public_key), endpoint="tcp://[::1]:1"
                ),
                event_bots=EventBots(
                    tmp_path / f"bots{n}", "hote", 1, cast(Any, None), "tcp://[::1]"
                ),
            )
            daemon.event_glue = EventGlue(cast(Any, daemon))
            self.daemons.append(daemon)

    def _sender(self, sender: bytes) -> Callable[[bytes, str, bytes], None]:
        def send(target: bytes, channel: str, body: bytes) -> None:
            daemon = next(d for d in self.daemons if d.identity.public_key == target)
            daemon.event_glue.send(daemon.events.receive(sender, body))

        return send

    def ask(self, n: int, request: dict[str, Any]) -> Reply:
        return reply(self.daemons[n], request)

    def opened(self, players: int = 0) -> Club:
        """An event opened by the organiser, heard by the players, ``players`` of them in."""
        assert self.ask(0, {"op": "event-open", "name": "club", "rounds": 2, "deals": 2})["ok"]
        organiser = self.daemons[0]
        for _, frame in organiser.events.heartbeat(0.0):
            for daemon in self.daemons[1:]:
                organiser.mesh.send(daemon.identity.public_key, "event", frame.to_wire())
        for n in range(1, players + 1):
            assert self.ask(n, {"op": "event-join", "event": ""})["ok"]
        return self


def _opening(**fields: Any) -> dict[str, Any]:
    return {"op": "event-open", "name": "club", "rounds": 2, "deals": 2} | fields


#: For each refusal about an event: who asks (the organiser is 0), of a club that opened an
#: event with that many players registered, what — the requests before the last one taken.
EVENT_CASES: list[tuple[Refusal, int, int, list[dict[str, Any]]]] = [
    (Refusal.EVENT_NAME, 0, 0, [_opening(name="")]),
    (Refusal.EVENT_ROUNDS, 0, 0, [_opening(rounds=99)]),
    (Refusal.EVENT_DEALS, 0, 0, [_opening(deals=99)]),
    (Refusal.EVENT_TABLE_SIZE, 0, 0, [_opening(tables=6)]),
    (Refusal.EVENT_NO_SUCH_ID, 0, 1, [{"op": "event-start", "event": "zz"}]),
    (Refusal.EVENT_AMBIGUOUS_ID, 0, 0, [_opening(), {"op": "event-start", "event": ""}]),
    (Refusal.EVENT_TOO_FEW_PLAYERS, 0, 1, [{"op": "event-start", "event": ""}]),
    (Refusal.EVENT_STARTED, 0, 3, [{"op": "event-start", "event": ""}] * 2),
    (Refusal.EVENT_NO_ROUND_OPEN, 0, 1, [{"op": "event-close", "event": ""}]),
    (Refusal.EVENT_PLAYER_UNKNOWN, 0, 1, [{"op": "event-withdraw", "event": "", "player": "x"}]),
    (
        Refusal.EVENT_PLAYER_AMBIGUOUS,
        0,
        2,
        [{"op": "event-withdraw", "event": "", "player": "joueur"}],
    ),
    (Refusal.EVENT_REGISTERED_ALREADY, 0, 0, [{"op": "event-join", "event": ""}] * 2),
    (Refusal.EVENT_NOT_ORGANISED_HERE, 1, 0, [{"op": "event-start", "event": ""}]),
    (Refusal.EVENT_NOT_IN, 2, 1, [{"op": "event", "event": ""}]),
    (Refusal.EVENT_IN_ALREADY, 1, 1, [{"op": "event-join", "event": ""}]),
    (Refusal.EVENT_BOT_LEVEL, 0, 0, [{"op": "event-join", "event": "", "bots": 2, "level": "x"}]),
    (Refusal.EVENT_BOTS_COUNT, 1, 0, [{"op": "event-join", "event": "", "bots": 99}]),
]


def check(answer: Reply, refusal: Refusal) -> None:
    """``answer`` refuses by ``refusal``, with every parameter it names, and a French player
    reads it in French — not the daemon's English."""
    assert answer["ok"] is False and answer["error"], answer
    assert answer.get("code") == refusal.value, answer
    assert set(refusal.params) <= set(answer["params"]), answer
    if refusal is not Refusal.RULE:
        assert set(answer["params"]) == set(refusal.params), answer
    french = said(answer, "fr")
    assert answer["error"] not in french and not french.startswith("Refused"), (answer, french)
    assert said(answer, "en") != said(answer, "fr")


@pytest.mark.parametrize(
    ("refusal", "daemon", "line"), TABLE_CASES, ids=[case[0].value for case in TABLE_CASES]
)
def test_each_refusal_at_the_table_goes_to_the_client_as_its_code(
    refusal: Refusal, daemon: Callable[[], Any], line: bytes | dict[str, Any]
) -> None:
    check(reply(daemon(), line), refusal)


@pytest.mark.parametrize(
    ("refusal", "asker", "players", "requests"),
    EVENT_CASES,
    ids=[case[0].value for case in EVENT_CASES],
)
def test_each_refusal_about_an_event_goes_to_the_client_as_its_code(
    tmp_path: Path,
    refusal: Refusal,
    asker: int,
    players: int,
    requests: list[dict[str, Any]],
) -> None:
    club = Club(tmp_path).opened(players)
    *before, last = requests
    for request in before:
        assert club.ask(asker, request)["ok"], request
    check(club.ask(asker, last), refusal)


# The lobby: the real one, a stranger's table offered to it.


def _in_lobby(seats: int = 1, stranger: bool = False) -> Any:
    """A daemon hosting ``seats`` seats in a real lobby — which a stranger's table was offered
    to, if asked."""

    def lobby(seats: int) -> Lobby:
        key = Identity.generate().public_key
        hosted = [(Identity.generate(), f"s{k}") for k in range(seats)]
        return Lobby(key, "tcp://127.0.0.1:9", hosted)

    ours = lobby(seats)
    if stranger:
        theirs = lobby(1)
        for _, frame in theirs.open("salon", 3):
            ours.receive(theirs.daemon_key, msgpack.unpackb(msgpack.packb(frame)))
    return _with(ours)


def _joining(invite: str | None) -> tuple[Any, dict[str, Any]]:
    daemon = _in_lobby(stranger=True)
    table = next(iter(daemon.lobby.offers)).hex()
    return daemon, {"op": "join", "table": table} | ({} if invite is None else {"invite": invite})


def _full() -> Any:
    daemon = _in_lobby(seats=3)
    daemon.lobby.open("salon", 3)
    return daemon


LOBBY_CASES: list[tuple[Refusal, Callable[[], tuple[Any, dict[str, Any]]]]] = [
    (Refusal.SEATS, lambda: (_in_lobby(), {"op": "open", "seats": 7})),
    (Refusal.NO_OPEN_TABLE, lambda: (_in_lobby(), {"op": "join", "table": TABLE.hex()})),
    (Refusal.NOT_AN_INVITE_CODE, lambda: _joining("x")),
    (Refusal.INVITE_TOO_EASY, lambda: _joining("AAAAAAAA")),
    (Refusal.OPENER_UNKNOWN, lambda: _joining(None)),
    (Refusal.NO_TABLE_TO_FILL, lambda: (_in_lobby(), {"op": "bot"})),
    (Refusal.TABLE_FULL, lambda: (_full(), {"op": "bot"})),
    (Refusal.TABLE_STARTED, lambda: (_full(), {"op": "leave"})),
]


@pytest.mark.parametrize(
    ("refusal", "asking"), LOBBY_CASES, ids=[case[0].value for case in LOBBY_CASES]
)
def test_each_refusal_of_the_lobby_goes_to_the_client_as_its_code(
    refusal: Refusal, asking: Callable[[], tuple[Any, dict[str, Any]]]
) -> None:
    daemon, request = asking()
    check(reply(daemon, request), refusal)


def test_every_refusal_is_driven_through_the_request_path_above() -> None:
    driven = {case[0] for case in [*TABLE_CASES, *LOBBY_CASES]} | {c[0] for c in EVENT_CASES}
    #: Not driven here: the server's own limits (tests/test_daemon_api.py), a daemon whose
    #: event bots are all taken, an event of over a thousand players, a place taken twice,
    #: and an event forgotten while held; and OTHER, which has no words of its own.
    elsewhere = {
        Refusal.TOO_MANY_CLIENTS,
        Refusal.LINE_TOO_LONG,
        Refusal.EVENT_BOTS_FULL,
        Refusal.EVENT_TOO_MANY_PLAYERS,
        Refusal.EVENT_PLACE_HELD,
        Refusal.EVENT_NOT_HEARD,
        Refusal.OTHER,
    }
    assert driven | elsewhere == set(Refusal) and not driven & elsewhere
