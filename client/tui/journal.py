"""The log of the deal, one line per public event, rebuilt from the seat's view.

Rebuilding it from ``state`` rather than collecting events means a client that starts, or
reconnects, in the middle of a deal shows the whole story so far.
"""

from __future__ import annotations

from typing import Any

from client.tui import cards
from client.tui.i18n import CONTRACTS
from client.tui.model import Model, sorted_codes
from protocol.rules.cards import card

#: Tricks in a deal at 3, 4 and 5 players (the whole deck but the chien, shared out).
TRICKS = {3: 24, 4: 18, 5: 15}


def deal_log(model: Model) -> list[str]:
    """The deal so far: the bids, the call, the chien, the trumps shown, the poignées, the
    tricks, and the partner and the petit au bout as they become known."""
    state, view, texts, lang = (
        model.state or {},
        model.view or model.last_view,
        model.texts,
        model.texts.lang,
    )
    if view is None:
        return []
    name = model.name
    # Between deals the state's deal number is the next deal's already; the log is the last one's.
    number = int(state.get("deal", 0)) if view is model.view else int(state["results"][-1]["deal"])
    lines = [texts("log_deal", deal=number + 1, dealer=name(view["dealer"]))]
    for bid in view["bids"]:
        contract = bid["contract"]
        lines.append(
            texts("log_pass", who=name(bid["seat"]))
            if contract in (None, "pass")
            else texts("log_bid", who=name(bid["seat"]), contract=CONTRACTS[contract])
        )
    if view.get("called"):
        lines.append(
            texts("log_call", who=name(view["taker"]), card=card(view["called"]).name(lang))
        )
    if view.get("chien"):
        lines.append(texts("log_chien", cards=cards.plain(view["chien"], lang)))
    shown = [c for c in sorted_codes(view.get("ecart", ())) if card(c).is_trump]
    if shown:
        lines.append(
            texts("log_ecart_trumps", who=name(view["taker"]), cards=cards.plain(shown, lang))
        )
    if view.get("chelem"):
        lines.append(texts("log_chelem", who=name(view["taker"])))
    for poignee in view.get("poignees", ()):
        lines.append(
            texts(
                "log_poignee",
                who=name(poignee["seat"]),
                size=poignee["size"],
                cards=cards.plain(sorted_codes(poignee["cards"]), lang),
            )
        )
    lines += _tricks(model, view)
    return lines


def _tricks(model: Model, view: dict[str, Any]) -> list[str]:
    texts, lang, players = model.texts, model.texts.lang, int(view["players"])
    lines: list[str] = []
    partner_told = False
    tricks = list(view.get("tricks", ()))
    if (
        view is not model.view
        and model.last_trick is not None
        and len(tricks) == TRICKS[players] - 1
    ):
        # The deal is over: its last trick is known from the events.
        last = model.last_trick
        tricks.append({"cards": list(last.cards), "winner": last.winner})
    names = [str(n) for n in (model.state or {}).get("seats", ())]
    # The first trick's leader: the dealer's right, or the taker who announced a chelem.
    leader = int(view["taker"]) if view.get("chelem") else (int(view["dealer"]) + 1) % players
    for number, trick in enumerate(tricks, start=1):
        leader = int(trick.get("leader", leader))  # the last trick's event does not say it
        played = [
            f"{names[(leader + i) % players] if names else '?'} {cards.symbol(code, lang)}"
            for i, code in enumerate(trick["cards"])
        ]
        lines.append(
            texts(
                "log_trick",
                number=number,
                who=model.name(trick["winner"]),
                cards=", ".join(played),
            )
        )
        leader = int(trick["winner"])  # who leads the next one
        if (
            not partner_told
            and view.get("called") in trick["cards"]
            and view.get("partner") is not None
        ):
            lines.append(texts("log_partner", who=model.name(view["partner"])))
            partner_told = True
        if number == TRICKS[players] and "T1" in trick["cards"]:
            lines.append(texts("log_petit_au_bout", who=model.name(trick["winner"])))
    return lines
