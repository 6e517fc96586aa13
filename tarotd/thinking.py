"""Bots think beside the daemon's event loop, not on it.

A bot's decision is the seat's game read and a :class:`~protocol.bots.players.Policy` asked: a
tenth of a millisecond for the basic bot, but some 60 ms at the median and 0.3 s at worst for
the strong one, which plays every choice out in sampled deals.  On the event loop that time
held every frame that came in meanwhile — another seat's card to show, a relay, the local
API's answers, the mesh's heartbeats — behind it.  So the daemon asks a :class:`BotTurn` (the
decision owed, over a *copy* of the seat's game, which the loop may change meanwhile), a
:class:`Thinker` answers it on a thread of its own, and the loop plays the answer when it
comes — if the question still stands (:meth:`BotTurn.stands`): a timeout or a closing
adopted meanwhile may have moved the deal on, and the bot is then asked again.

Decisions stay those of the same bots in the same order: a table's bots are asked one at a
time, each turn over the same view as before, so a seeded bot plays the same cards.

A thread, not a process: the strong bot's Python holds the interpreter's lock while it thinks,
so the loop waits up to the interpreter's switch interval (5 ms) each time it wakes, rather
than the whole decision — the bench's bots are basic, whose turn takes a tenth of that.
"""

from __future__ import annotations

import copy
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from protocol.bots.players import Policy, decide
from protocol.rules.deal import Action, Deal


@dataclass(frozen=True)
class BotTurn:
    """A decision a hosted bot owes, as it stood when asked."""

    deal: int  #: the deal's number at its table
    seat: int
    moves: int  #: actions the seat's game held then: a later one answers another question
    game: Deal  #: a copy of the seat's game, the worker's own to read
    policy: Policy

    @classmethod
    def ask(cls, deal: int, seat: int, game: Deal, policy: Policy) -> BotTurn:
        return cls(deal, seat, len(game.history), copy.deepcopy(game), policy)

    def stands(self, deal: int, game: Deal | None) -> bool:
        """Whether the seat's game is where it was when asked, in the same deal."""
        return deal == self.deal and game is not None and len(game.history) == self.moves

    def think(self) -> list[Action]:
        """The bot's action(s): what :func:`~protocol.bots.players.decide` says on the copy."""
        return decide(self.game, self.policy)


class Thinker:
    """One thread for a daemon's bots, made on first use and stopped with the daemon: the
    turns are answered in the order asked."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None

    def think(self, turn: BotTurn) -> Future[list[Action]]:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tarotd-bot")
        return self._pool.submit(turn.think)

    def close(self) -> None:
        """Answer no more turns; one being thought over is left to end on its thread, its
        answer dropped."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
