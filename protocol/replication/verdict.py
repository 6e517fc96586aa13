"""The outcome of every failed check: which seat deviated, where, how, and the proof.

Every check in ``protocol`` that can fail because of what another seat sent ends in a
:class:`Verdict`.  A verdict that cannot be pinned on one seat yet (say a dealt card
decrypts to a non-card point although every key checked out) has ``seat=None`` and is
settled later by the audit, which replays the deal from the revealed seeds.

A verdict also says what it rests on (:class:`Fault`): a *proven* deviation — the culprit's own
signed messages, or the seed it revealed, show it — or a *silence*, which only the other seats'
word backs (they timed it out).  The rules give the two different outcomes: a deviation costs
its culprit the penalty row, a silence before the reveal costs what the table's rule says (by
default the penalty once the silent seat could read its hand, nothing before: a pulled cable
is no crime, leaving after seeing one's cards is no free redeal).

The reason is for people; code that must tell verdicts apart reads :class:`Code` (and, for a
card that did not open, :attr:`Verdict.position`).  Neither goes on the wire: a proof file and
a signed score state a verdict in words, as they always have, so a verdict read back from one
has the code :attr:`Code.RULE`, and the code and position take no part in comparing verdicts.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field

from protocol.replication.identity import fingerprint


class Fault(enum.Enum):
    """What a verdict rests on."""

    PROVEN = "proven"  #: the culprit's signed messages or revealed seed show the deviation
    SILENCE = "silence"  #: it stopped answering: only the others' word, which proves no intent


class Code(enum.Enum):
    """What kind of deviation a verdict is about, for the code that acts on it."""

    RULE = "rule"  #: a rule of the game or of the protocol, which the reason names
    BAD_KEY = "bad-key"  #: a key that does not match the lock its seat committed to
    NO_CARD = "no-card"  #: a position that opens to no card although every key matches
    SILENCE = "silence"  #: stopped answering before the reveal
    KEPT_SEED = "kept-seed"  #: stopped answering at the reveal: its seed kept


#: The reason given for a seat timed out at the reveal, its seed kept.
KEPT_SEED = "did not reveal its seed"


@dataclass(frozen=True)
class Verdict:
    seat: int | None  #: the culprit, or None while the fault cannot be attributed yet
    step: str  #: the protocol step where it was found: "shuffle", "lock", "deal", "play", …
    reason: str  #: the rule broken, in words a player can read
    evidence: tuple[str, ...] = field(default=())  #: references to the offending message(s)
    fault: Fault = Fault.PROVEN
    code: Code = field(default=Code.RULE, compare=False)
    position: int | None = field(default=None, compare=False)  #: the pack position it is about

    @property
    def attributed(self) -> bool:
        return self.seat is not None

    @property
    def proven(self) -> bool:
        """A deviation pinned on a seat by what that seat signed: it takes the penalty row."""
        return self.seat is not None and self.fault is Fault.PROVEN

    def to_json(self) -> dict[str, object]:
        """The verdict as ``tarot sim --json`` and ``tarot scores --json`` print it."""
        return {
            "culprit": self.seat,
            "step": self.step,
            "rule": self.reason,
            "evidence": list(self.evidence),
            "fault": self.fault.value,
        }

    def named_json(self, names: Sequence[str], members: Sequence[bytes]) -> dict[str, object]:
        """:meth:`to_json` with the culprit's name and key fingerprint: what a player checks
        against the fingerprint shown next to each name at the table."""
        named = self.to_json()
        if self.seat is not None:
            named["name"], named["fingerprint"] = names[self.seat], fingerprint(members[self.seat])
        return named

    def __str__(self) -> str:
        who = f"seat {self.seat}" if self.seat is not None else "not yet attributed"
        return f"{self.step}: {self.reason} ({who})"


class VerdictError(Exception):
    """Raised by a check that failed; carries the :class:`Verdict`."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(str(verdict))
        self.verdict = verdict
