"""Seats that cheat: real attacks run by a modified seat machine, for the cheat lab.

Each kind is a :class:`~protocol.machine.SeatMachine` that deviates from the protocol in one
way; the honest seats must stop the deal (or, for a renonce, score it with the penalty) and
name it.  ``tarot sim --cheat SEAT:KIND`` and ``tarotd --cheat KIND`` pick one by name.
"""

from __future__ import annotations

from collections.abc import Callable

from protocol.deal import Action, Play
from protocol.machine import SeatMachine
from protocol.messages import Message



class Revoke(SeatMachine):
    """Plays a card that breaks the rules of play (does not follow suit, trump or overtrump)
    the first time it can: nothing public shows it, the audit finds it."""

    revoked = False

    def act(self, action: Action) -> list[Message]:
        game = self.game
        if isinstance(action, Play) and not self.revoked and game is not None and self.decision() is not None:
            hand = game.hand(self.seat)
            illegal = [c for c in hand if c not in game.legal_cards(self.seat)]
            if illegal:
                self.revoked = True
                return self._send_action(Play(self.seat, illegal[0]))
        return super().act(action)


CHEATS: dict[str, Callable[..., SeatMachine]] = {
    "revoke": Revoke,
}


def cheat_machine(kind: str) -> Callable[..., SeatMachine]:
    try:
        return CHEATS[kind]
    except KeyError:
        raise ValueError(f"unknown cheat {kind!r}: use one of {', '.join(sorted(CHEATS))}") from None



