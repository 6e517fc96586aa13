"""Wrong guesses of an invite code, counted and throttled per key and per host, sans IO.

With the code as a PAKE (:mod:`protocol.pake`) a stranger can test a guess only by running a
whole exchange with the opener, and the opener sees every wrong one: the joiner's proof comes
first.  This is where the opener counts them.  Each daemon key and each host has a tally of its
wrong proofs; after the ``n``-th, its next knock is answered only after a delay that doubles
each time (``base · 2ⁿ⁻¹``, at most ``longest``), and at ``lock_key`` wrong proofs from one key,
or ``lock_host`` from one host, it is locked out: knocks from it are not answered at all until
the opener lifts the lockout (``tarot unlock``; :meth:`Guesses.unlock`).  A key or host that
keeps knocking while it must wait — ``lock_refused`` knocks refused — is locked out as well: an
honest joiner told to wait knocks again a few seconds later, not hundreds of times.  Fresh keys
cost a stranger nothing, a host does: the host's tally is what bounds an attacker, the key's
what bounds one careless player without blocking the others of its host for long.

A right proof clears its key's tally (a player who mistyped is not held back by it), never its
host's.  The host is given by the daemon: the address the key last proved itself from; this
machine's own loopback address is given as no host (its other daemons, none of the LAN's), so
only the key's tally bounds it.  The tallies are bounded in number — the oldest unlocked ones
go first — so fresh keys are not a memory leak either.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

BASE_DELAY: Final = 0.5  #: seconds before the next try after a first wrong proof
LONGEST_DELAY: Final = 60.0
LOCK_KEY: Final = 10  #: wrong proofs from one key that lock it out
LOCK_HOST: Final = 30  #: wrong proofs from one host that lock it out
LOCK_REFUSED: Final = 50  #: knocks refused while it must wait that lock a key or host out
MAX_TALLIES: Final = 4096  #: keys and hosts remembered at once


class Answer(enum.StrEnum):
    """What the opener does with a knock; the value is what a refusal frame says."""

    ANSWER = "answer"  #: run the exchange
    WAIT = "wait"  #: a wrong proof came from this key or host too recently
    LOCKED = "locked"  #: locked out until the opener lifts it


class Kind(enum.StrEnum):
    KEY = "key"
    HOST = "host"


@dataclass
class Tally:
    wrong: int = 0
    last: float = float("-inf")  #: when the last wrong proof came
    locked: bool = False
    refused: int = 0  #: knocks not answered (waiting or locked)

    def ready_at(self, base: float, longest: float) -> float:
        if self.wrong == 0:
            return float("-inf")
        return self.last + min(longest, base * 2.0 ** (self.wrong - 1))


class Guesses:
    def __init__(
        self,
        base: float = BASE_DELAY,
        longest: float = LONGEST_DELAY,
        lock_key: int = LOCK_KEY,
        lock_host: int = LOCK_HOST,
        lock_refused: int = LOCK_REFUSED,
    ) -> None:
        self.base, self.longest, self.lock_refused = base, longest, lock_refused
        self.limits = {Kind.KEY: lock_key, Kind.HOST: lock_host}
        self._tallies: dict[tuple[Kind, str], Tally] = {}
        self.wrong = 0  #: wrong proofs, in all
        self.right = 0  #: right proofs, in all
        self.refused = 0  #: knocks not answered, in all
        self.lockouts = 0  #: keys and hosts locked out, in all

    def _subjects(self, key: bytes, host: str) -> list[tuple[Kind, str]]:
        return [(Kind.KEY, key.hex())] + ([(Kind.HOST, host)] if host else [])

    def may_answer(
        self, key: bytes, host: str, now: float
    ) -> tuple[Answer, list[tuple[Kind, str]]]:
        """Whether to run an exchange for a knock from ``key`` at ``host`` now, and the keys
        and hosts this knock locks out (knocking on while told to wait)."""
        answer, locked = Answer.ANSWER, []
        tallies = [
            (subject, tally)
            for subject in self._subjects(key, host)
            if (tally := self._tallies.get(subject)) is not None
        ]
        for _, tally in tallies:
            if tally.locked:
                answer = Answer.LOCKED
            elif answer is Answer.ANSWER and now < tally.ready_at(self.base, self.longest):
                answer = Answer.WAIT
        if answer is Answer.ANSWER:
            return answer, []
        self.refused += 1
        for subject, tally in tallies:
            tally.refused += 1
            if not tally.locked and tally.refused >= self.lock_refused:
                tally.locked = True
                self.lockouts += 1
                locked.append(subject)
        return (Answer.LOCKED if locked else answer), locked

    def is_locked(self, key: bytes, host: str) -> bool:
        return any(
            tally.locked
            for tally in map(self._tallies.get, self._subjects(key, host))
            if tally is not None
        )

    def count_wrong(self, key: bytes, host: str, now: float) -> list[tuple[Kind, str]]:
        """A wrong proof from ``key`` at ``host``: the keys and hosts it locks out now."""
        self.wrong += 1
        locked = []
        for subject in self._subjects(key, host):
            tally = self._tallies.pop(subject, None) or Tally()
            self._tallies[subject] = tally  # the most recent last: the oldest go first
            tally.wrong, tally.last = tally.wrong + 1, now
            if not tally.locked and tally.wrong >= self.limits[subject[0]]:
                tally.locked = True
                self.lockouts += 1
                locked.append(subject)
        self._forget_oldest()
        return locked

    def count_right(self, key: bytes) -> None:
        self.right += 1
        self._tallies.pop((Kind.KEY, key.hex()), None)

    def _forget_oldest(self) -> None:
        unlocked = [subject for subject, tally in self._tallies.items() if not tally.locked]
        for subject in unlocked[: max(0, len(self._tallies) - MAX_TALLIES)]:
            del self._tallies[subject]

    def lockouts_now(self) -> list[dict[str, object]]:
        """The keys and hosts locked out, for ``status``: kind, who, wrong proofs, refusals."""
        return [
            {"kind": kind.value, "who": who, "wrong": tally.wrong, "refused": tally.refused}
            for (kind, who), tally in self._tallies.items()
            if tally.locked
        ]

    def unlock(self) -> int:
        """Lift every lockout and forget every tally (the opener's word): how many were
        locked out."""
        lifted = sum(tally.locked for tally in self._tallies.values())
        self._tallies.clear()
        return lifted

    def summary(self) -> dict[str, object]:
        return {
            "wrong": self.wrong,
            "right": self.right,
            "refused": self.refused,
            "lockouts": self.lockouts,
            "locked": self.lockouts_now(),
        }
