"""What the player may pick, and the rules of picking — pure, no screen, no daemon.

The daemon's ``options`` say what is legal; these classes keep the player's cursor and marks
within it, so that a wrong choice is refused while picking, with the reason, instead of
after Enter.  The daemon still checks everything: its refusal is shown if it ever comes.
A refusal here is a :class:`Refusal` naming a sentence of :mod:`client.tui.i18n`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from client.tui.i18n import rule_key
from protocol.rules.cards import card, cards
from protocol.rules.rules import Rule, RuleError, lead_restriction, play_refusal
from protocol.rules.variants import variant

#: The letter that picks each bid (the same in French and English: the contracts' names are French).
BID_KEYS = {"p": "pass", "t": "petite", "g": "garde", "s": "garde-sans", "c": "garde-contre"}


@dataclass(frozen=True)
class Refusal:
    """Why a pick was refused: the key of the sentence in :mod:`client.tui.i18n` and its values."""

    key: str
    params: Mapping[str, object] = field(default_factory=dict)

    @classmethod
    def by(cls, rule: Rule, **params: object) -> Refusal:
        """A refusal by one of the engine's rules, said as the engine's is."""
        return cls(rule_key(rule), params)

    @classmethod
    def of(cls, error: RuleError) -> Refusal:
        """The rules engine's refusal, said by its code (see :meth:`client.tui.i18n.Texts.rule`)."""
        if error.code is Rule.OTHER:
            return cls.by(Rule.OTHER, message=str(error))
        return cls.by(error.code, **error.params)


def is_trump(code: str) -> bool:
    return card(code).is_trump


@dataclass
class Choice:
    """One option among a few (the bids, the calls, yes or no): a cursor that stays inside."""

    options: list[str]
    index: int = 0

    @property
    def current(self) -> str:
        return self.options[self.index]

    def move(self, step: int) -> None:
        self.index = max(0, min(len(self.options) - 1, self.index + step))

    def select(self, option: str) -> bool:
        """Put the cursor on ``option``; False (and no move) if it is not offered."""
        if option not in self.options:
            return False
        self.index = self.options.index(option)
        return True


@dataclass
class HandCursor:
    """A cursor over the hand as it is drawn that lands only on the cards it may take
    (the legal cards when playing, the cards the écart may take, the trumps of a poignée)."""

    cards: list[str]
    enabled: set[str]
    index: int = -1

    def __post_init__(self) -> None:
        if self.index < 0 or self.cards[self.index] not in self.enabled:
            self.index = next((i for i, c in enumerate(self.cards) if c in self.enabled), -1)

    @property
    def current(self) -> str | None:
        return self.cards[self.index] if self.index >= 0 else None

    def move(self, step: int) -> None:
        """To the next enabled card in that direction; no move at either end."""
        i = self.index + step
        while 0 <= i < len(self.cards):
            if self.cards[i] in self.enabled:
                self.index = i
                return
            i += step

    def select(self, code: str) -> bool:
        if code not in self.enabled or code not in self.cards:
            return False
        self.index = self.cards.index(code)
        return True


@dataclass
class EcartPicker:
    """The écart picked card by card under the rules (the daemon's ``options.ecart``):
    only cards it allows (no king, no bout), exactly ``size`` of them, and trumps only when
    unavoidable — then exactly ``trumps_needed`` of them, which will be shown."""

    allowed: list[str]
    size: int
    trumps_needed: int
    picked: list[str] = field(default_factory=list)

    def toggle(self, code: str) -> Refusal | None:
        """Mark ``code`` for the écart, or take it back; the reason if the rules refuse it."""
        if code in self.picked:
            self.picked.remove(code)
            return None
        if code not in self.allowed:
            refused = card(code)
            if refused.is_trump and not refused.is_bout:
                return Refusal.by(Rule.ECART_TRUMP)
            return Refusal.by(Rule.ECART_KING_OR_BOUT, card=refused)
        trump = is_trump(code)
        if len(self.picked) >= self.size:
            return Refusal("ecart_full", {"size": self.size})
        trumps = sum(1 for c in self.picked if is_trump(c))
        if trump and trumps >= self.trumps_needed:
            return Refusal("ecart_trumps_enough", {"needed": self.trumps_needed})
        if not trump and len(self.picked) - trumps >= self.size - self.trumps_needed:
            return Refusal("ecart_not_trump", {"needed": self.trumps_needed})
        self.picked.append(code)
        return None

    @property
    def missing(self) -> int:
        return self.size - len(self.picked)


@dataclass
class PoigneePicker:
    """The trumps of a poignée (the daemon's ``options.poignee``): trumps only, as many as a
    threshold exactly, the Excuse only to complete a poignée of all the player's trumps.
    It starts with the usual choice, the smallest poignée of the taker's écart trumps (the
    table has seen them: they are not in the hand to be marked) and then the lowest of the
    hand, so that showing one is a key and Enter."""

    trumps: list[str]  #: the trumps and the Excuse the hand holds, and the taker's écart trumps
    sizes: dict[str, int]  #: threshold of each poignée the hand allows, e.g. {"simple": 8}
    ecart: list[str] = field(default_factory=list)  #: the trumps of the taker's écart
    picked: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.picked:
            smallest = min(self.sizes.values())
            lowest = sorted(
                (c for c in self.trumps if c != "EX"),
                key=lambda c: (c not in self.ecart, card(c).rank),
            )
            self.picked = lowest[:smallest] if len(lowest) >= smallest else [*lowest, "EX"]

    def toggle(self, code: str) -> Refusal | None:
        if code in self.picked:
            self.picked.remove(code)
            return None
        if code not in self.trumps:
            return Refusal.by(Rule.POIGNEE_NOT_TRUMP, card=card(code))
        if len(self.picked) >= max(self.sizes.values()):
            return Refusal("poignee_full", {"count": max(self.sizes.values())})
        self.picked.append(code)
        return None

    @property
    def size(self) -> str | None:
        """The poignée the marked trumps make, if they make one."""
        return next((name for name, count in self.sizes.items() if count == len(self.picked)), None)

    def problem(self) -> Refusal | None:
        """Why the marked trumps cannot be shown as they are; None if they can."""
        if self.size is None:
            return Refusal("poignee_size", {"sizes": "/".join(str(n) for n in self.sizes.values())})
        others = [c for c in self.trumps if c != "EX"]
        if "EX" in self.picked and any(c not in self.picked for c in others):
            return Refusal.by(Rule.POIGNEE_EXCUSE)
        return None


def card_refusal(view: Mapping[str, Any], hand: Sequence[str], code: str) -> Refusal | None:
    """The rule that refuses ``code`` on the trick in ``view``, asked of the rules engine
    (:func:`~protocol.rules.rules.play_refusal`): the screen says what the engine decides."""
    trick = cards(view.get("current", ()))
    called = view.get("called")
    barred = lead_restriction(card(called) if called else None, len(view.get("tricks", ())), trick)
    error = play_refusal(
        cards(hand),
        trick,
        card(code),
        forbidden_lead_suit=None if barred is None else barred.suit,
        called=barred,
    )
    return None if error is None else Refusal.of(error)


def poignee_refusal(
    view: Mapping[str, Any] | None, decision: str | None, hand: Sequence[str]
) -> Refusal:
    """Why ``m`` shows no poignée now: not the moment, the moment past, or too few trumps."""
    if view is None or decision != "playing":
        return Refusal("poignee_not_now")
    if view.get("tricks") or any(p["seat"] == view.get("seat") for p in view.get("poignees", ())):
        return Refusal("poignee_late")
    players = int(view["players"])
    trumps = sum(1 for c in hand if card(c).is_trump or card(c).is_excuse)
    return Refusal(
        "poignee_too_few",
        {"count": variant(players).poignee_thresholds[0], "players": players, "held": trumps},
    )
