"""The three table sizes of French Tarot and what changes with them.

Seats are numbered 0..n-1 **in the order of play**: the game turns counter-clockwise, so
seat ``s + 1`` sits at the right of seat ``s`` and speaks, receives and plays after it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Contract(enum.IntEnum):
    """The four bids, in increasing order; the value is the score multiplier.

    >>> Contract.GARDE_SANS > Contract.GARDE, Contract.GARDE_SANS.multiplier
    (True, 4)
    >>> Contract.from_code("garde-contre").french, Contract.PETITE.chien_seen
    ('Garde Contre', True)
    """

    PETITE = 1
    GARDE = 2
    GARDE_SANS = 4
    GARDE_CONTRE = 6

    @property
    def multiplier(self) -> int:
        return int(self.value)

    @property
    def chien_seen(self) -> bool:
        """Petite and Garde turn the chien over and make the taker discard (the écart)."""
        return self in (Contract.PETITE, Contract.GARDE)

    @property
    def code(self) -> str:
        """Machine name used on the command line and in JSON: ``garde-sans``."""
        return self.name.lower().replace("_", "-")

    @property
    def french(self) -> str:
        return {1: "Petite", 2: "Garde", 4: "Garde Sans", 6: "Garde Contre"}[self.value]

    @classmethod
    def from_code(cls, code: str) -> Contract:
        for contract in cls:
            if contract.code == code:
                return contract
        allowed = ", ".join(c.code for c in cls)
        raise ValueError(f"unknown contract {code!r}: use one of {allowed}")


class PoigneeSize(enum.IntEnum):
    """Simple, double and triple poignée; the value is the bonus in points (never multiplied)."""

    SIMPLE = 20
    DOUBLE = 30
    TRIPLE = 40

    @property
    def code(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Variant:
    """Everything that depends on the number of players."""

    players: int
    hand_size: int
    chien_size: int
    packet: int  # cards dealt to a player at once
    poignee_thresholds: tuple[int, int, int]  # trumps shown for simple, double, triple

    @property
    def tricks(self) -> int:
        return self.hand_size

    @property
    def calls_a_card(self) -> bool:
        """At five the taker calls a king (or queen…) to choose a partner."""
        return self.players == 5

    def poignee_size(self, shown: int) -> PoigneeSize | None:
        """The poignée that exactly ``shown`` trumps make, or None.

        >>> variant(4).poignee_size(13), variant(4).poignee_size(11)
        (<PoigneeSize.DOUBLE: 30>, None)
        """
        for size, threshold in zip(PoigneeSize, self.poignee_thresholds):
            if shown == threshold:
                return size
        return None

    def threshold(self, size: PoigneeSize) -> int:
        return self.poignee_thresholds[list(PoigneeSize).index(size)]

    def next_seat(self, seat: int) -> int:
        """The seat at the right, who plays next (counter-clockwise)."""
        return (seat + 1) % self.players


VARIANTS: dict[int, Variant] = {
    3: Variant(players=3, hand_size=24, chien_size=6, packet=4, poignee_thresholds=(13, 15, 18)),
    4: Variant(players=4, hand_size=18, chien_size=6, packet=3, poignee_thresholds=(10, 13, 15)),
    5: Variant(players=5, hand_size=15, chien_size=3, packet=3, poignee_thresholds=(8, 10, 13)),
}


def variant(players: int) -> Variant:
    """The rules that change with the number of players.

    >>> five = variant(5)
    >>> five.hand_size, five.chien_size, five.poignee_thresholds, five.calls_a_card
    (15, 3, (8, 10, 13), True)
    >>> variant(6)
    Traceback (most recent call last):
    ...
    ValueError: French Tarot is played by 3, 4 or 5 players, not 6
    """
    try:
        return VARIANTS[players]
    except KeyError:
        raise ValueError(f"French Tarot is played by 3, 4 or 5 players, not {players!r}") from None
