"""A table's invite code: drawn by its opener, shown on its screen, typed by its players.

The code is what tells daemons that do not know each other that an offer — and a join — comes
from someone at the table; the lobby proves it by a run of CPace (:mod:`protocol.pake`,
:mod:`tarotd.lobby.core`), never by a value on the wire that would let anyone test a guess
offline.  Here: what a code is, which ones are too easy to guess, and how one is drawn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from protocol.refusal import Refusal, Refused

#: Crockford's base 32: no I, L, O or U, which read as 1, 1, 0 and V — a code is read off a
#: screen and typed.
INVITE_ALPHABET: Final = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
INVITE_LENGTH: Final = 8  #: symbols of an invite code: 40 bits
INVITE_EXAMPLE: Final = "7KQ2-M9XD"
_INVITE_BYTES: Final = 5  #: 40 bits of entropy, 8 symbols of 5 bits


def invite_code(text: str) -> str:
    """``text`` as an invite code, normalised: upper case, without dashes or spaces, with O
    read as 0 and I, L as 1 (ValueError saying what a code is)."""
    code = text.upper().replace("-", "").replace(" ", "").translate(str.maketrans("OIL", "011"))
    if len(code) != INVITE_LENGTH or any(symbol not in INVITE_ALPHABET for symbol in code):
        raise Refused(
            f"{text!r} is not an invite code: {INVITE_LENGTH} letters and digits, such as "
            f"{INVITE_EXAMPLE}",
            Refusal.NOT_AN_INVITE_CODE,
            invite=text,
            length=INVITE_LENGTH,
            example=INVITE_EXAMPLE,
        )
    return code


def weakness(code: str) -> str | None:
    """Why a normalised code is too easy to guess, or None.  A drawn code has 40 bits; one a
    player makes up has far fewer when it repeats, counts or spells digits only — the guesses an
    attacker tries first, whatever the throttle lets through."""
    if code.isdigit():
        return "it is digits only (10⁸ codes, not 32⁸): mix in letters"
    for k in range(len(code) - 2):
        if code[k] == code[k + 1] == code[k + 2]:
            return f"it repeats {code[k]} three times in a row"
    positions = [INVITE_ALPHABET.index(symbol) for symbol in code]
    for k in range(len(code) - 3):
        steps = {positions[k + j + 1] - positions[k + j] for j in range(3)}
        if steps in ({1}, {-1}):
            return f"{code[k : k + 4]} runs in order"
    if code[:4] == code[4:] or code[:2] * 4 == code:
        return "it repeats itself"
    if len(set(code)) < 5:
        return "it uses fewer than 5 different letters and digits"
    return None


@dataclass(frozen=True)
class Invite:
    """A table's invite code.  The opener shows it, the players type it: it is what tells their
    daemons, which do not know each other, that an offer — and a join — comes from someone at
    the table, proved by a run of CPace (:mod:`protocol.pake`) and never by a value that
    would let anyone test a guess offline."""

    code: str = field(repr=False)  #: normalised (:func:`invite_code`)

    @classmethod
    def parse(cls, text: str) -> Invite:
        """A code as typed (ValueError if it is no code, or too easy to guess)."""
        code = invite_code(text)
        why = weakness(code)
        if why is not None:
            raise Refused(
                f"the invite code {text!r} is too easy to guess: {why}; let the opener draw "
                f"one (start it without --invite), or make up one such as {INVITE_EXAMPLE}",
                Refusal.INVITE_TOO_EASY,
                invite=text,
                example=INVITE_EXAMPLE,
            )
        return cls(code)

    @classmethod
    def draw(cls, entropy: Callable[[int], bytes]) -> Invite:
        """A random code (drawn again in the rare case it reads as a weak one)."""
        while True:
            bits = int.from_bytes(entropy(_INVITE_BYTES), "big")
            code = "".join(
                INVITE_ALPHABET[(bits >> (5 * k)) & 31] for k in reversed(range(INVITE_LENGTH))
            )
            if weakness(code) is None:
                return cls(code)

    @property
    def shown(self) -> str:
        """The code as a screen shows it: ``7KQ2-M9XD``."""
        return f"{self.code[:4]}-{self.code[4:]}"

    @property
    def secret(self) -> bytes:
        """CPace's PRS: the normalised code's bytes."""
        return self.code.encode()
