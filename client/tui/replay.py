"""A scored deal stepped through trick by trick, every hand visible once the deal's audit
has passed (TarotClub's deal viewer is the reference players know): from the breakdown the
daemon keeps in the deal's result — the hands as dealt, the chien and écart, the tricks.

Each seat is one line: its name, the card it put in the trick shown, and what it still
holds; before the first trick, the hands as dealt."""

from __future__ import annotations

import copy
from typing import Any

from prompt_toolkit.formatted_text import StyleAndTextTuples

from client.tui import cards
from client.tui.model import Model, Replay, sorted_codes
from client.tui.summary import summary_fragments


def source(model: Model) -> Model:
    """The model whose results the replay steps through: the table before's, when the replay
    is of a deal of the table finished before this one (:attr:`Replay.state`)."""
    replay = model.replay
    if replay is None or replay.state is None:
        return model.shown()
    earlier = copy.copy(model)
    earlier.state, earlier.holding = replay.state, False
    return earlier


def start(model: Model) -> Replay | None:
    """The replay ``r`` starts: the last deal scored here — or, at a table that has none yet,
    the last of the table finished before it (an event's round over)."""
    shown = model.shown()
    if replayable(shown):
        return Replay(replayable(shown)[-1], state=shown.state if shown is not model else None)
    if model.earlier is not None:
        earlier = copy.copy(model)
        earlier.state = model.earlier
        if replayable(earlier):
            return Replay(replayable(earlier)[-1], state=model.earlier)
    return None


def any_scored(model: Model) -> bool:
    """Whether a deal was scored where :func:`start` looks — here, or at the table before —
    though none can be replayed: every one passed by all, or void."""
    return any((state or {}).get("results") for state in (model.shown().state, model.earlier))


def replayable(model: Model) -> list[int]:
    """The indexes of the results that can be replayed: the deals played, breakdown kept."""
    results = (model.state or {}).get("results", ())
    return [i for i, row in enumerate(results) if (row.get("breakdown") or {}).get("tricks")]


def step(model: Model, deals: int = 0, tricks: int = 0) -> None:
    """Move the replay ``deals`` deals and ``tricks`` tricks on (negative: back), inside."""
    replay, shown = model.replay, source(model)
    choices = replayable(shown)
    if replay is None or not choices:
        return
    at = choices.index(replay.deal) if replay.deal in choices else len(choices) - 1
    deal = choices[max(0, min(len(choices) - 1, at + deals))]
    count = len(shown.state["results"][deal]["breakdown"]["tricks"]) if shown.state else 0
    trick = 0 if deal != replay.deal else max(0, min(count, replay.trick + tricks))
    model.replay = Replay(deal, trick, replay.state)


def held(
    breakdown: dict[str, Any], contract: str | None, taker: int | None, seat: int, tricks: int
) -> list[str]:
    """What ``seat`` holds once ``tricks`` tricks have fallen: its hand as dealt — the
    taker's with the chien taken and the écart put aside at a Petite or a Garde — less the
    cards it played."""
    hand = list(breakdown["hands"][seat])
    if seat == taker and contract in ("petite", "garde"):
        hand = [c for c in hand + list(breakdown["chien"]) if c not in breakdown["ecart"]]
    players = int(breakdown["players"])
    for trick in breakdown["tricks"][:tricks]:
        played = trick["cards"][(seat - trick["leader"]) % players]
        if played in hand:
            hand.remove(played)
    return sorted_codes(hand)


def replay_fragments(model: Model) -> StyleAndTextTuples:
    replay = model.replay
    model = source(model)
    state, texts, lang = model.state or {}, model.texts, model.texts.lang
    if replay is None:
        return []
    row = state["results"][replay.deal]
    breakdown: dict[str, Any] = row["breakdown"]
    names = [str(n) for n in state.get("seats", ())]
    tricks: list[dict[str, Any]] = breakdown["tricks"]
    choices = replayable(model)
    if replay.trick == 0:
        what = texts("replay_dealt")
    else:
        trick = tricks[replay.trick - 1]
        what = texts(
            "replay_trick",
            trick=replay.trick,
            tricks=len(tricks),
            leader=names[trick["leader"]],
            winner=names[trick["winner"]],
        )
    out: StyleAndTextTuples = [
        (
            "class:heading",
            texts(
                "replay_title",
                deal=int(row["deal"]) + 1,
                index=choices.index(replay.deal) + 1,
                count=len(choices),
                step=what,
            ),
        ),
        ("", "\n\n"),
    ]
    width = max(len(n) for n in names)
    players = int(breakdown["players"])
    shown = "hands" in breakdown
    for seat, name in enumerate(names):
        card: StyleAndTextTuples = [("", "    ")]
        if replay.trick:
            trick = tricks[replay.trick - 1]
            code = trick["cards"][(seat - trick["leader"]) % players]
            mark = "▶" if seat == trick["winner"] else " "
            card = [
                ("class:seat.to-act", mark),
                (cards.style(code) + " class:played", cards.symbol(code, lang).rjust(3)),
            ]
        out += [
            ("class:seat.you" if seat == model.seat else "", f"  {name.ljust(width)} "),
            *card,
            ("", "   "),
        ]
        if shown:
            out += cards.fragments(
                held(breakdown, row.get("contract"), row.get("taker"), seat, replay.trick), lang
            )
        out.append(("", "\n"))
    if shown and breakdown.get("chien"):  # the chien as dealt, and what the taker put aside
        out += [
            ("", "  " + texts("summary_chien")),
            *cards.fragments(sorted_codes(breakdown["chien"]), lang),
        ]
        if breakdown.get("ecart"):
            out += [
                ("", texts("summary_ecart")),
                *cards.fragments(sorted_codes(breakdown["ecart"]), lang),
            ]
        out.append(("", "\n"))
    if not shown:
        out += [("", "\n"), ("class:dim", texts("replay_hidden")), ("", "\n")]
    return [*out, ("", "\n"), *summary_fragments(model, replay.deal, with_cards=False)]
