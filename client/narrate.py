"""A deal told as a player hears it at the table: one line per action, in French or English.

The game's words stay French in both languages (preneur, chien, écart, poignée, garde…).
Used by the client's log of the deal and by ``scripts/play``.
"""

from __future__ import annotations

from protocol.cards import Card
from protocol.deal import Action, AnnounceChelem, Bid, Call, Deal, Ecart, ShowPoignee, Trick
from protocol.variants import Variant

_TEXT = {
    "fr": {
        "pass": "{who} passe",
        "bid": "{who} annonce une {contract}",
        "call": "{who} appelle le {card}",
        "ecart": "{who} fait son écart",
        "ecart_trumps": "{who} fait son écart et montre les atouts écartés : {cards}",
        "chelem": "{who} annonce le chelem",
        "poignee": "{who} montre une poignée {size} : {cards}",
        "play": "{who} joue {card}",
        "trick": "Pli {number} pour {who}",
        "seat": "Joueur {seat}",
        "chien": "Le chien : {cards}",
    },
    "en": {
        "pass": "{who} passes",
        "bid": "{who} bids {contract}",
        "call": "{who} calls the {card}",
        "ecart": "{who} makes the écart",
        "ecart_trumps": "{who} makes the écart and shows the trumps in it: {cards}",
        "chelem": "{who} announces a chelem",
        "poignee": "{who} shows a {size} poignée: {cards}",
        "play": "{who} plays {card}",
        "trick": "Trick {number} to {who}",
        "seat": "Player {seat}",
        "chien": "The chien: {cards}",
    },
}


def seat_name(seat: int, lang: str, names: list[str] | None = None) -> str:
    return names[seat] if names else _TEXT[lang]["seat"].format(seat=seat)


def _cards(cards: tuple[Card, ...] | list[Card], lang: str) -> str:
    return " ".join(c.symbol(lang) for c in cards)


def describe(
    action: Action, variant: Variant, lang: str = "fr", names: list[str] | None = None
) -> str | None:
    """The public line for an action; None for a decision nobody hears (not announcing a chelem)."""
    text = _TEXT[lang]
    who = seat_name(action.seat, lang, names)
    if isinstance(action, Bid):
        if action.contract is None:
            return text["pass"].format(who=who)
        return text["bid"].format(who=who, contract=action.contract.french)
    if isinstance(action, Call):
        return text["call"].format(who=who, card=action.card.name(lang))
    if isinstance(action, Ecart):
        shown = tuple(c for c in action.cards if c.is_trump)
        if shown:
            return text["ecart_trumps"].format(who=who, cards=_cards(shown, lang))
        return text["ecart"].format(who=who)
    if isinstance(action, AnnounceChelem):
        return text["chelem"].format(who=who) if action.announce else None
    if isinstance(action, ShowPoignee):
        size = variant.poignee_size(len(action.cards))
        label = size.code if size else str(len(action.cards))
        return text["poignee"].format(who=who, size=label, cards=_cards(action.cards, lang))
    return text["play"].format(who=who, card=action.card.symbol(lang))


def describe_trick(trick: Trick, number: int, lang: str = "fr", names: list[str] | None = None) -> str:
    return _TEXT[lang]["trick"].format(number=number, who=seat_name(trick.winner, lang, names))


def describe_chien(deal: Deal, lang: str = "fr") -> str:
    return _TEXT[lang]["chien"].format(cards=_cards(deal.chien or (), lang))
