"""The table as formatted text: the seats around it, the trick, the hand, what to do now.

Seats sit counter-clockwise, the order of play: the player at the bottom, the next to play
on their right, the one before them on their left.  Every function here draws from the
:class:`~client.tui.model.Model` alone; the mouse handlers it attaches call back into the
application through the ``on_card`` / ``on_option`` functions it is given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.mouse_events import MouseEvent, MouseEventType

from client.tui import cards
from client.tui.i18n import CONTRACTS
from client.tui.model import Model, sorted_codes

#: The smallest table drawn (columns, rows): the seats at five fit around its trick.
WIDTH, HEIGHT = 64, 11

OnPick = Callable[[str], None]


@dataclass(frozen=True)
class Place:
    """Where a seat is drawn: its name block (``align`` is left, centre or right of
    ``col``) and the card it put in the trick."""

    row: int
    col: int
    align: str
    card_row: int
    card_col: int


def places(width: int, height: int) -> dict[str, Place]:
    """The places around a table of ``width`` × ``height``: a larger screen spreads them,
    the trick staying in the middle."""
    mid = (height - 1) // 2
    spread = 3 + (height - HEIGHT) // 4  #: rows between the middle and the top and bottom cards
    across = width * 18 // WIDTH  #: columns from the side to a side seat's card
    return {
        "bottom": Place(height - 2, width // 2, "centre", mid + spread, width // 2),
        "right": Place(mid - 1, width, "right", mid + 1, width - across),
        "left": Place(mid - 1, 0, "left", mid + 1, across),
        "top": Place(0, width // 2, "centre", mid - spread, width // 2),
        "top_right": Place(0, width - 4, "right", mid - spread, width // 2 + width * 10 // WIDTH),
        "top_left": Place(0, 4, "left", mid - spread, width // 2 - width * 10 // WIDTH),
    }


#: The places of the seats after the player's, in the order of play, for 3, 4 and 5 players.
_AROUND = {
    3: ("bottom", "top_right", "top_left"),
    4: ("bottom", "right", "top", "left"),
    5: ("bottom", "right", "top_right", "top_left", "left"),
}


class Canvas:
    """A fixed grid of styled characters to draw the table on, then flattened to fragments."""

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.cells: list[list[tuple[str, str]]] = [[("", " ")] * width for _ in range(height)]

    def put(self, row: int, col: int, fragments: StyleAndTextTuples, align: str = "left") -> None:
        length = sum(len(f[1]) for f in fragments)
        start = {"left": col, "centre": col - length // 2, "right": col - length}[align]
        start = max(0, min(self.width - length, start))
        for fragment in fragments:
            for ch in fragment[1]:
                if 0 <= start < self.width:
                    self.cells[row][start] = (fragment[0], ch)
                start += 1

    def fragments(self) -> StyleAndTextTuples:
        out: StyleAndTextTuples = []
        for row in self.cells:
            for style, ch in row:
                if out and out[-1][0] == style:
                    out[-1] = (style, out[-1][1] + ch)
                else:
                    out.append((style, ch))
            out.append(("", "\n"))
        return out


def seat_lines(
    model: Model, seat: int, room: int | None = None
) -> tuple[StyleAndTextTuples, StyleAndTextTuples]:
    """A seat's two lines: who (to play, name, fingerprint) and what they are (dealer,
    taker and contract, partner once known, their bid, away) — each in ``room`` columns if
    given: the fingerprint goes first, then the end of the line gives way to an ellipsis."""
    state, view = model.state or {}, model.view or {}
    texts = model.texts
    to_act = view.get("to_act") == seat and not state.get("between_deals")
    name_style = (
        "class:seat.to-act"
        if to_act
        else ("class:seat.you" if seat == model.seat else "class:seat")
    )
    fingerprint = str(state["fingerprints"][seat]).split("-")[0]
    # The manifest's word (signed by every member), else what this client added itself.
    signed = state.get("bots") or ()
    level = (signed[seat] if seat < len(signed) else "") or model.bot_levels.get(
        str(state["seats"][seat])
    )
    tag = f" ({texts('bot_level', level=level)})" if level else ""
    first: StyleAndTextTuples = [
        ("class:seat.to-act", "▶ " if to_act else "  "),
        (name_style, model.name(seat)),
        ("class:dim", f" [{fingerprint}]{tag}"),
    ]
    if room is not None and _length(first) > room:  # the fingerprint first, then the name
        first[2] = ("class:dim", tag)
        name_room = room - 2 - len(tag)
        if _length(first) > room and name_room >= 4:
            first[1] = (name_style, model.name(seat)[: name_room - 1] + "…")
    roles: list[str] = []
    if state.get("dealer") == seat:
        roles.append(texts("dealer_mark"))
    if view.get("taker") == seat and view.get("contract"):
        roles.append(f"{texts('taker')} {CONTRACTS[view['contract']]}")
    elif view.get("taker") is None:
        bids = [b for b in view.get("bids", ()) if b["seat"] == seat]
        if bids:
            roles.append(CONTRACTS[bids[-1]["contract"] or "pass"])
    if view.get("partner") == seat and seat != view.get("taker"):
        roles.append(texts("partner"))
    roles += [
        f"{texts('poignee')} {p['size']} ({len(p['cards'])})"
        for p in view.get("poignees", ())
        if p["seat"] == seat
    ]
    away = model.away_seats()
    second: StyleAndTextTuples = [("class:role", ", ".join(roles))]
    if seat in away:
        second.append(
            ("class:away", (" — " if roles else "") + texts("away", seconds=round(away[seat])))
        )
    if room is not None:
        first, second = _cut(first, room), _cut(second, room)
    return first, second


def _length(fragments: StyleAndTextTuples) -> int:
    return sum(len(fragment[1]) for fragment in fragments)


def _cut(fragments: StyleAndTextTuples, room: int) -> StyleAndTextTuples:
    """``fragments`` in ``room`` columns, the end cut with an ellipsis if they do not fit."""
    if _length(fragments) <= room:
        return fragments
    out: StyleAndTextTuples = []
    left = max(1, room) - 1
    for style, text, *_ in fragments:
        out.append((style, text[:left]))
        left -= len(out[-1][1])
    out.append((fragments[-1][0], "…"))
    return out


def trick_on_table(model: Model) -> tuple[int | None, list[str], int]:
    """The trick drawn: (who led it, its cards, its number) — the current one; the one just
    taken until the next card is led, so that the last card of a trick is seen; or, on
    request, the last one that fell."""
    view = model.view or {}
    tricks = view.get("tricks", [])
    if tricks and (model.show_last_trick or not view.get("current")):
        return tricks[-1]["leader"], list(tricks[-1]["cards"]), len(tricks)
    return view.get("leader"), list(view.get("current", [])), len(tricks) + 1


def info_lines(model: Model) -> StyleAndTextTuples:
    """Above the table: the table and deal, the contract and the call, the chien."""
    state, view, texts, lang = model.state or {}, model.view or {}, model.texts, model.texts.lang
    out: StyleAndTextTuples = [
        (
            "class:heading",
            texts(
                "table_title",
                table=state.get("name") or str(state.get("table"))[:8],
                deal=int(state.get("deal", 0)) + 1,
                dealer=model.name(state.get("dealer")),
            ),
        ),
        ("", "\n"),
    ]
    if view.get("taker") is not None and view.get("contract"):
        parts = [
            texts(
                "contract_line",
                taker=model.name(view["taker"]),
                contract=CONTRACTS[view["contract"]],
            )
        ]
        if view.get("called"):
            parts.append(texts("called", card=cards.symbol(view["called"], lang)))
            if view.get("partner") is None:
                parts.append(texts("partner_unknown"))
        if view.get("chelem"):
            parts.append(texts("chelem_announced"))
        out.append(("class:contract", " — ".join(parts)))
    out.append(("", "\n"))
    if view.get("chien"):
        out += [("", texts("chien", cards="")), *cards.fragments(sorted_codes(view["chien"]), lang)]
    if view.get("ecart"):
        ecart = sorted_codes(view["ecart"])  # as the hand is sorted, whatever order it came in
        out += [("", "   " + texts("ecart_own", cards="")), *cards.fragments(ecart, lang)]
    out.append(("", "\n"))
    tricks = view.get("tricks", [])
    away = model.away_seats()
    paused = state.get("paused")
    if model.show_last_trick:
        line = (
            texts("last_trick", number=len(tricks), winner=model.name(tricks[-1]["winner"]))
            if tricks
            else texts("no_last_trick")
        )
        out.append(("class:heading", line))
    elif paused:  # our own daemon cannot write: what the player must know first
        out.append(
            ("class:away", texts(f"paused_{paused['fault']}", seconds=round(paused["seconds"])))
        )
    elif state.get("unsettled"):  # cut off from the others: it waits for their word
        out.append(("class:away", texts("unsettled")))
    elif state.get("rows_awaited"):
        out.append(("class:away", texts("rows_awaited", who=", ".join(state["rows_awaited"]))))
    elif away:  # the longest silent (each away seat is also marked at its place)
        seat, seconds = max(away.items(), key=lambda item: item[1])
        out.append(("class:away", texts("peer_away", who=model.name(seat), seconds=round(seconds))))
    out.append(("", "\n"))
    return out


#: The lines :func:`info_lines` draws above the table.
INFO_LINES = 4


def table_fragments(model: Model, width: int = WIDTH, height: int = HEIGHT) -> StyleAndTextTuples:
    """The info lines, then the seats around a table of ``width`` × ``height`` (at least
    :data:`WIDTH` × :data:`HEIGHT`) and the trick in the middle."""
    state = model.state or {}
    seats, me = len(state.get("seats", ())), model.seat or 0
    width, height = max(WIDTH, width), max(HEIGHT, height)
    canvas = Canvas(width, height)
    where = places(width, height)
    leader, trick, number = trick_on_table(model)
    around = _AROUND.get(seats, ())
    for offset, place_name in enumerate(around):
        seat = (me + offset) % seats
        place = where[place_name]
        first, second = seat_lines(model, seat, _room(place_name, around, width))
        canvas.put(place.row, place.col, first, place.align)
        canvas.put(place.row + 1, place.col, second, place.align)
        if leader is not None and (seat - leader) % seats < len(trick):
            code = trick[(seat - leader) % seats]
            canvas.put(
                place.card_row,
                place.card_col,
                [
                    (
                        cards.style(code) + " class:played",
                        f" {cards.symbol(code, model.texts.lang)} ",
                    )
                ],
                "centre",
            )
    if (model.view or {}).get("phase") == "playing" or model.show_last_trick:
        canvas.put(
            (height - 1) // 2,
            width // 2,
            [("class:dim", model.texts("trick", number=number))],
            "centre",
        )
    return [*info_lines(model), *canvas.fragments()]


def _room(place: str, around: tuple[str, ...], width: int) -> int:
    """The columns a seat's lines may take at its place: the two top seats share the top
    row (from 4 columns in at each end to 2 apart in the middle); a side seat has the half
    of its row; the top and bottom ones the row."""
    if place in ("top_left", "top_right") and {"top_left", "top_right"} <= set(around):
        return (width - 4 - 4 - 2) // 2
    if place in ("left", "right"):
        return width // 2 - 2
    return width


def _clickable(
    fragments: StyleAndTextTuples, on_pick: OnPick | None, value: str
) -> StyleAndTextTuples:
    """The fragments, calling ``on_pick(value)`` when the mouse button is released on them."""
    if on_pick is None:
        return fragments

    def handler(event: MouseEvent) -> object:
        if event.event_type is MouseEventType.MOUSE_UP:
            on_pick(value)
            return None
        return NotImplemented

    return [(f[0], f[1], handler) for f in fragments]


def _framed(text: str, cursor: bool, marked: bool = False) -> str:
    """A card or an option with its cursor and mark in the text itself, ``[R♥]`` and ``·R♥``,
    so that they read without colours too (a screen capture, a monochrome terminal)."""
    return ("[" if cursor else "·" if marked else " ") + text + ("]" if cursor else " ")


def hand_fragments(model: Model, on_card: OnPick | None = None) -> StyleAndTextTuples:
    """The hand, sorted: the card under the cursor reversed, the marked ones (écart,
    poignée) underlined, and the ones the player may not take now dimmed."""
    lang = model.texts.lang
    cursor = model.cursor
    marked = set(
        model.ecart.picked if model.ecart else model.poignee.picked if model.poignee else ()
    )
    dim_others = model.decision == "playing" and model.poignee is None
    out: StyleAndTextTuples = [("class:heading", model.texts("hand") + "  ")]
    for code in model.hand:
        style = cards.style(code)
        if cursor is not None and dim_others and code not in cursor.enabled:
            style = "class:illegal"
        elif cursor is not None and dim_others:
            style += " class:legal"
        under = cursor is not None and code == cursor.current
        if code in marked:
            style += " class:marked"
        if under:
            style += " class:cursor"
        out += _clickable(
            [(style, _framed(cards.symbol(code, lang), under, code in marked))], on_card, code
        )
    return out


def option_label(model: Model, option: str) -> StyleAndTextTuples:
    """A bid, a call or yes/no as drawn in the prompt line."""
    if model.decision == "call":
        return cards.fragments([option], model.texts.lang)
    if model.decision == "chelem":
        return [("", model.texts(option))]
    return [("", CONTRACTS[option])]


def prompt_fragments(model: Model, on_option: OnPick | None = None) -> StyleAndTextTuples:
    """What the player is to do now, with the choices when it is a choice."""
    texts, state, view = model.texts, model.state or {}, model.view or {}
    if state.get("finished"):
        event = model.event
        # The daemon seats the next round.
        if event is not None and event.get("closed") != event.get("rounds"):
            return [("class:prompt", texts("prompt_round_over"))]
        return [("class:prompt", texts("prompt_finished"))]
    if state.get("between_deals"):
        return [("class:prompt", texts("prompt_between"))]
    decision = model.decision
    if model.choice is not None:
        key = {"bidding": "prompt_bid", "call": "prompt_call", "chelem": "prompt_chelem"}[
            str(decision)
        ]
        out: StyleAndTextTuples = [("class:prompt", texts(key) + " ")]
        for i, option in enumerate(model.choice.options):
            under = i == model.choice.index
            style = "class:option.cursor" if under else "class:option"
            label: StyleAndTextTuples = [
                (f"{style} {f[0]}", f[1]) for f in option_label(model, option)
            ]
            framed = [(style, "[" if under else " "), *label, (style, "]" if under else " ")]
            out += [*_clickable(framed, on_option, option), ("", " ")]
        return out
    if model.ecart is not None:
        trumps = (
            texts("prompt_ecart_trumps", needed=model.ecart.trumps_needed)
            if model.ecart.trumps_needed
            else ""
        )
        return [
            (
                "class:prompt",
                texts(
                    "prompt_ecart",
                    count=len(model.ecart.picked),
                    size=model.ecart.size,
                    trumps=trumps,
                ),
            )
        ]
    if model.poignee is not None:
        sizes = ", ".join(f"{name} {count}" for name, count in model.poignee.sizes.items())
        return [
            ("class:prompt", texts("prompt_poignee", count=len(model.poignee.picked), sizes=sizes))
        ]
    if decision == "playing":
        line = texts("prompt_play")
        offer: dict[str, Any] | None = model.options.get("poignee")
        if offer:
            line += texts("prompt_poignee_offer", sizes=", ".join(offer["sizes"]))
        return [("class:prompt", line)]
    if view.get("to_act") is not None:
        return [("class:dim", texts("prompt_wait", who=model.name(view["to_act"])))]
    return [("class:dim", texts("prompt_wait_deal"))]
