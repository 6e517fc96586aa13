"""Forming tables on the LAN, sans IO: offers, joins, the signed manifest, the first dealer.

A daemon *opens* a table (an offer: name, number of seats, an id) and tells every peer;
others *join* it with the seats they host (a daemon may host several: its player and bots,
each with its own identity key).  The opener keeps the list of members in the order they
joined — it has no other power: once the table is full it sends the manifest (table id,
name, members in seat order with their daemons' endpoints, and the table's rule for silence:
:mod:`protocol.replication.manifest`), **every member signs it**, and the first dealer is drawn by a
commit-reveal coin that every member contributes to, so no one chooses it — and no one
re-rolls it by keeping its coin: the coins are awaited for ``tarotd --timeout`` (the time comes
with :meth:`Lobby.heartbeat`), a member that kept its coin is named and the dealer drawn
without it, the same at every member (:mod:`tarotd.coin`).

**Ids bound to their openers.**  A table id is ``SHA-256(TABLE_DOMAIN ‖ opener's key ‖ nonce)``
cut to 16 bytes (:func:`table_id_of`), the nonce drawn by the opener and carried in every
offer; an offer whose id is not that of its sender and nonce is refused.  Nobody can
then open under an id of their choosing (``00…00``, say) nor under another daemon's.

**Event tables.**  An event's round plan (``protocol/event/event.py``) seats its tables under ids
derived from the event, round and table, not from an opener's key: the daemon tells the
lobby which slot its player sits at (:meth:`Lobby.expect`, an :class:`EventSlot` read from
the organiser's signed round entry, which every member verified).  For that id alone the
lobby lets the daemon of the plan's first seat open the offer, seats exactly the members the
plan names there — nobody else, in the plan's seat order — and signs a manifest only if it
is that seating under the event's rule for silence.  A stranger cannot open under such an
id: only the first seat's daemon is expected to.

**Trust.**  Anyone on the LAN can send an offer or a join; the lobby acts on those of daemons
it has a reason to trust, and on no other.  A daemon trusts (:meth:`Lobby._trusted`):

* its own offers;
* the daemons of its ``--peer`` list — the keys given as ``KEY@HOST:PORT``, and the key that
  proved itself at a ``HOST:PORT`` given without one (the daemon's ``trusts``);
* an offer whose opener proved, in a run of CPace with us, that it holds the **invite code**
  we were given (:mod:`protocol.pake`); and the opener seats a daemon that proved its code
  the same way.  The opener draws the code (or takes the one it was given, if strong enough:
  :func:`weakness`) and shows it; the players type it (``tarotd --invite``, or the client).

**The invite code as a PAKE.**  Nothing an opener sends tests a guess of its code: an offer
carries no proof of it.  A joiner holding a code *knocks* at an offer of the wanted name
(``knock``: a session id and its CPace share, for the table and both daemons' keys); the opener
*answers* with its share; the joiner *proves* the code (its confirmation tag, first); the opener
checks it — a wrong one is one guess, counted and throttled per key and per host
(:mod:`tarotd.guesses`), a right one seats that daemon's joins and is answered with the opener's
own tag (``proven``), which proves the offer to the joiner.  A stranger therefore tests one
guess per whole exchange with the opener, and a recorded exchange tests none.  The opener
refuses a knock while a key or host must wait, or is locked out (``refused``, saying which),
until :meth:`Lobby.unlock`.

**Offers of strangers** — nobody we trust opened them, and none proved our code — are kept
apart (``verified`` false in ``tables``) and capped: at most :data:`MAX_STRANGER_OFFERS` of one
key, and they are forgotten before any offer we trust.

So: daemons wanting the same table (``tarotd --table NAME``) converge on one — among the
open offers of that name **that they trust**, the one with the smallest id wins; an opener
whose offer loses withdraws it and joins the winner, and so do its joiners — and an opener
seats only daemons it trusts or that prove its code.  A stranger with a throw-away key can
open as many offers as it likes: nobody withdraws for one, nobody joins one, and its joins
are refused, each refusal logged once (:class:`_Refusals`).

A manifest is checked whole before anything changes (:meth:`Lobby._manifest_members`):
exactly one member per seat, every member well formed, no key twice, our seats at our daemon
and at least one of them there; a manifest that fails is refused, with the reason logged,
and the offer stays as it was.

Every frame is a msgpack-friendly dict with a ``t`` key; :meth:`Lobby.receive` checks its
shape and ignores anything malformed, so a peer can make the lobby do nothing worse than
refuse its frame.
"""

from __future__ import annotations

import enum
import hashlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import msgpack

from protocol import wire
from protocol.pake import SHARE_SIZE, SID_SIZE, TAG_SIZE, Admitting, Joining, PakeError, channel
from protocol.replication.identity import Identity, fingerprint, is_valid_public_key, verify
from protocol.replication.manifest import MANIFEST_DOMAIN as MANIFEST_DOMAIN
from protocol.replication.manifest import (
    ManifestError,
    SignedManifest,
    SilenceCost,
    manifest_document,
)
from protocol.replication.public import TableSetup
from tarotd.coin import COIN_SIZE, COMMITMENT_SIZE, CoinToss, commitment
from tarotd.guesses import Answer, Guesses, Kind

log = logging.getLogger(__name__)

ID_SIZE = 16
NONCE_SIZE: Final = 16
MAX_NAME: Final = 64  #: characters of a table's or a member's name
MAX_MEMBER_ENDPOINT: Final = 128
MAX_BOT_LEVEL: Final = 16  #: characters of a bot's level in a member record
MAX_OFFERS = 64  #: offers of other daemons remembered at once
MAX_STRANGER_OFFERS: Final = 3  #: open offers of one key we have no trust in, kept at once
MAX_RUNS: Final = 256  #: CPace runs an opener keeps open at once (one per knocking key)
#: Runs a joiner starts for the table it wants, answered or not, before it knocks at no more
#: strangers: each one let a fake opener test one guess of its code (64 of 2⁴⁰), and as many as
#: the offers it keeps, so that fake offers under the wanted name cannot use them all up first.
MAX_FAILED_KNOCKS: Final = MAX_OFFERS
KNOCK_SILENCE: Final = 30.0  #: seconds a knock waits for its answer before it counts as failed
KNOCK_AGAIN: Final = 5.0  #: seconds before knocking again at an opener that said "wait"
REVEAL_TIMEOUT: Final = 30.0  #: seconds of a round of the dealer coin's reveals, by default
MAX_EARLY_SLOTS: Final = 16  #: offers of event tables kept until their round is heard of
#: (cause, daemon) pairs told in the log, then one line saying the rest are not
MAX_REFUSALS_LOGGED: Final = 64
#: Frames to one daemon (its key) or to every known peer (``BROADCAST``).
BROADCAST = b""
TABLE_DOMAIN: Final = b"tarot/v2/table"
#: Crockford's base 32: no I, L, O or U, which read as 1, 1, 0 and V — a code is read off a
#: screen and typed.
INVITE_ALPHABET: Final = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
INVITE_LENGTH: Final = 8  #: symbols of an invite code: 40 bits
INVITE_EXAMPLE: Final = "7KQ2-M9XD"
_INVITE_BYTES: Final = 5  #: 40 bits of entropy, 8 symbols of 5 bits


class OfferState(enum.StrEnum):
    """Where an offer is; the value is what the ``offer`` frame and the local API carry."""

    OPEN = "open"  #: taking seats
    FULL = "full"  #: the manifest is out; signatures, seals and coins are coming in
    #: Every member signed and sealed, every coin is in or its time is up: the dealer is drawn.
    READY = "ready"
    WITHDRAWN = "withdrawn"  #: its opener took it back before it filled


def table_id_of(opener: bytes, nonce: bytes) -> bytes:
    """The id of the table ``opener`` opens with ``nonce``: nobody chooses it, and an offer
    under an id that is not its sender's is refused."""
    return hashlib.sha256(TABLE_DOMAIN + opener + nonce).digest()[:ID_SIZE]


def invite_code(text: str) -> str:
    """``text`` as an invite code, normalised: upper case, without dashes or spaces, with O
    read as 0 and I, L as 1 (ValueError saying what a code is)."""
    code = text.upper().replace("-", "").replace(" ", "").translate(str.maketrans("OIL", "011"))
    if len(code) != INVITE_LENGTH or any(symbol not in INVITE_ALPHABET for symbol in code):
        raise ValueError(
            f"{text!r} is not an invite code: {INVITE_LENGTH} letters and digits, such as "
            f"{INVITE_EXAMPLE}"
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
            raise ValueError(
                f"the invite code {text!r} is too easy to guess: {why}; let the opener draw "
                f"one (start it without --invite), or make up one such as {INVITE_EXAMPLE}"
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


@dataclass(frozen=True)
class Member:
    key: bytes  #: the seat's identity key
    name: str
    daemon: bytes  #: key of the daemon that hosts the seat
    endpoint: str  #: that daemon's mesh endpoint
    #: The level of the bot that plays the seat, "" for a person: said by the seat's own
    #: daemon and signed in the manifest with its name, so every member's screen tags it.
    bot: str = ""

    def to_wire(self) -> list[object]:
        return [self.key, self.name, self.daemon, self.endpoint, *([self.bot] if self.bot else [])]


@dataclass
class Offer:
    table_id: bytes
    name: str
    seats: int
    opener: bytes
    members: list[Member] = field(default_factory=list)
    state: OfferState = OfferState.OPEN
    nonce: bytes = b""  #: the id is :func:`table_id_of` the opener and this
    #: Its invite code, if we know it — we opened the offer, or its opener proved a code we
    #: were given — never on the wire.
    invite: Invite | None = None
    #: The daemons that proved its invite code to us, its opener: their joins are taken.
    invited: set[bytes] = field(default_factory=set)
    #: Why its opener refused the code we knocked with, if it did: ``code`` (not its code),
    #: ``wait`` or ``locked`` (:class:`~tarotd.guesses.Answer`).
    refused: str | None = None
    #: The table's rule for a seat timed out mid-deal: its opener's, in the manifest.
    silence: SilenceCost = SilenceCost.NOTHING
    #: The members that kept their coin: the first dealer was drawn without it.
    withheld: tuple[bytes, ...] = ()

    @property
    def full(self) -> bool:
        return len(self.members) >= self.seats

    def to_wire(self) -> dict[str, Any]:
        return {
            "t": "offer",
            "table": self.table_id,
            "name": self.name,
            "seats": self.seats,
            "opener": self.opener,
            "members": [m.to_wire() for m in self.members],
            "state": self.state.value,
            "nonce": self.nonce,
            "silence": self.silence.value,
        }


@dataclass(frozen=True)
class EventSlot:
    """A table of an event's round, as its plan seats it: the lobby forms it under ``table_id``
    with these members only, in this order.  A registered player is its daemon's own identity,
    so each key is also the key of the daemon hosting that seat; the first one opens."""

    table_id: bytes
    name: str
    keys: tuple[bytes, ...]  #: the members in seat order
    silence: SilenceCost

    @property
    def opener(self) -> bytes:
        return self.keys[0]


@dataclass(frozen=True)
class ReadyTable:
    """A table every member signed, with its first dealer."""

    setup: TableSetup
    members: tuple[Member, ...]
    first_dealer: int
    manifest: bytes  #: the signed manifest, as every member signed it
    signatures: tuple[bytes, ...]
    name: str = ""

    def to_bytes(self) -> bytes:
        """What the daemon stores, to take the table up again after a restart."""
        data: bytes = msgpack.packb(
            [self.manifest, list(self.signatures), self.first_dealer], use_bin_type=True
        )
        return data

    @classmethod
    def from_bytes(cls, data: bytes) -> ReadyTable:
        manifest, signatures, dealer = msgpack.unpackb(data, raw=False)
        document = SignedManifest(manifest, tuple(signatures)).verified()
        members = tuple(_member(raw) for raw in document.entries)
        _id(document.table_id)  # 16 bytes, as every table id
        return cls(
            TableSetup.from_manifest(document),
            members,
            int(dealer),
            manifest,
            tuple(signatures),
            document.name,
        )


FrameOut = tuple[bytes, dict[str, Any]]  #: (destination daemon key or BROADCAST, frame)


def manifest_bytes(
    table_id: bytes, name: str, members: list[Member], silence: SilenceCost = SilenceCost.NOTHING
) -> bytes:
    """The canonical manifest every member signs: seat order, keys, names, endpoints and the
    table's rule for silence (:mod:`protocol.replication.manifest`)."""
    return manifest_document(table_id, name, [m.to_wire() for m in members], silence)


class ManifestRefused(ValueError):
    """A manifest that does not hold as a whole; the text says why, for the log."""


class _Refusals:
    """What the lobby refused, told in the log once per cause and daemon: a stranger repeating
    a frame, or sending it from fresh keys, must not fill the log — after
    :data:`MAX_REFUSALS_LOGGED` pairs, one line says that the rest go untold."""

    def __init__(self) -> None:
        self._told: set[tuple[str, bytes]] = set()
        self._muted = False

    def tell(self, cause: str, daemon: bytes, message: str, *args: object) -> None:
        if (cause, daemon) in self._told or self._muted:
            return
        if len(self._told) >= MAX_REFUSALS_LOGGED:
            self._muted = True
            log.warning("lobby: %d refusals told; further ones are not logged", len(self._told))
            return
        self._told.add((cause, daemon))
        log.warning("lobby: " + message, *args)


class Lobby:
    def __init__(
        self,
        daemon_key: bytes,
        endpoint: str,
        seats: list[tuple[Identity, str]],
        entropy: Callable[[int], bytes] = os.urandom,
        *,
        trusts: Callable[[bytes], bool] = lambda daemon: False,
        silence: SilenceCost = SilenceCost.NOTHING,
        timeout: float = REVEAL_TIMEOUT,
        secrets: Callable[[int], bytes] = os.urandom,
        guesses: Guesses | None = None,
        proved: Callable[[bytes], None] = lambda daemon: None,
    ) -> None:
        """``seats``: the identities this daemon hosts, with the names shown to players.
        ``entropy``: where table ids, invite codes and dealer coins come from — the OS, but for
        a test's ``tarotd --deal-seed``, which must form the same table on every run.
        ``trusts``: whether a daemon's key is one of our ``--peer`` (asked when it matters:
        a peer given without its key is known by the key it proves).
        ``silence``: what a seat timed out before the reveal costs, at the tables we open
        (every member signs it in the manifest) and the only rule we join a table under:
        nobody is bound by a rule it did not choose.
        ``timeout``: how long a round of the dealer coin's reveals lasts (``tarotd --timeout``,
        :mod:`tarotd.coin`).
        ``secrets``: where CPace's scalars and session ids come from — the OS always, never a
        seed (a test may give its own, to compare runs).
        ``guesses``: the tallies of wrong proofs of our codes (:mod:`tarotd.guesses`).
        ``proved``: told the key of each daemon that proves our code (discovery favours it)."""
        self.daemon_key = daemon_key
        self._secrets = secrets
        self.guesses = guesses or Guesses()
        self._proved = proved
        #: Our CPace runs as a joiner, by table id; the opener's, by (joiner, table id).
        self._knocks: dict[bytes, tuple[Joining, Invite]] = {}
        self._runs: dict[tuple[bytes, bytes], Admitting] = {}
        self._failed_knocks = 0  #: runs of ours that failed, for the table we want
        self._knock_after: dict[bytes, float] = {}  #: table id → when to knock again
        self._knocked_at: dict[bytes, float | None] = {}  #: table id → when we knocked
        self._join_proved: bytes | None = None  #: the table to join once its opener proves
        self._join_invite: Invite | None = None  #: and the code we were given for it
        self._code_given = False  #: whether the wanted table's code was given (we knock)
        #: Daemons that proved the code of the table we want to us: we knock at their offers of
        #: it too (a player given our code may have opened before it saw ours).
        self._proven: set[bytes] = set()
        self.silence = silence
        self._entropy = entropy
        self._trusts = trusts
        self.endpoint = endpoint
        self.hosted = {identity.public_key: (identity, name) for identity, name in seats}
        #: The level of each hosted seat a bot plays (the daemon says which): signed as such.
        self.bot_levels: dict[bytes, str] = {}
        self.offers: dict[bytes, Offer] = {}
        self.wanted: tuple[str, int] | None = None
        #: the wanted table's code: given, or drawn when we open it
        self.invite: Invite | None = None
        self.joined: bytes | None = None  #: the offer our seats are in
        self.timeout = timeout
        self._now: float | None = None  #: the time of the last heartbeat
        self._coins: dict[bytes, bytes] = {}  #: our secret coin per table
        self._signatures: dict[bytes, dict[bytes, bytes]] = {}  #: table → member → signature
        self._tosses: dict[bytes, CoinToss] = {}  #: the dealer coin of each full table
        self._ready: list[ReadyTable] = []
        #: frames before the manifest
        self._early: dict[bytes, list[tuple[bytes, dict[str, Any]]]] = {}
        self._refusals = _Refusals()
        #: event tables our seats are expected at, by table id
        self.slots: dict[bytes, EventSlot] = {}
        #: The players of the events we are in: an offer of theirs under an id we do not know
        #: yet is an event table whose round we have not heard of — kept, not refused.
        self.fellows: frozenset[bytes] = frozenset()
        self._early_slots: dict[bytes, tuple[bytes, dict[str, Any]]] = {}

    # --- What the daemon asks ------------------------------------------------------

    def members_here(self) -> list[Member]:
        return [
            Member(key, name, self.daemon_key, self.endpoint, self.bot_levels.get(key, ""))
            for key, (_, name) in self.hosted.items()
        ]

    def open(self, name: str, seats: int) -> list[FrameOut]:
        """Open a table under a fresh invite code (``offers[joined].invite``)."""
        return self._after_change(self._open(name, seats, None))

    def _open(self, name: str, seats: int, invite: Invite | None) -> Offer:
        """Open a table under ``invite``, or a code drawn now.  The nonce, then our coin, then
        the code: a test's ``--deal-seed`` gives the same id and coin it always did."""
        if seats not in (3, 4, 5):
            raise ValueError("a table has 3, 4 or 5 seats")
        nonce = self._entropy(NONCE_SIZE)
        table_id = table_id_of(self.daemon_key, nonce)
        self._coins[table_id] = self._entropy(COIN_SIZE)
        invite = invite or Invite.draw(self._entropy)
        offer = Offer(
            table_id,
            name,
            seats,
            self.daemon_key,
            self.members_here()[:seats],
            nonce=nonce,
            invite=invite,
            silence=self.silence,
        )
        self.offers[table_id] = offer
        self.joined = table_id
        return offer

    def want(self, name: str, seats: int, invite: str | None = None) -> list[FrameOut]:
        """Join the table of this name (opening it if nobody we trust has): ``tarotd --table``,
        with the code of ``tarotd --invite`` if given (ValueError if it is no code, or too
        easy to guess)."""
        self.invite = Invite.parse(invite) if invite is not None else None
        self.wanted = (name, seats)
        self._failed_knocks, self._code_given, self._proven = 0, invite is not None, set()
        out: list[FrameOut] = []
        for offer in list(self.offers.values()):
            offer.refused = None  # refused another code, perhaps: this one is worth a knock
            out += self._knock_if_wanted(offer)
        return out + self._pursue()

    def join(self, table_id: bytes, invite: str | None = None) -> list[FrameOut]:
        """Join this offer: one we trust at once; one whose opener we do not know, with its
        ``invite`` code, once the opener proved it holds that code and we proved it too (a run
        of CPace: the join goes when the opener's proof comes; a wrong code is refused by the
        opener, ``offers[table_id].refused``).  ValueError saying what is wrong."""
        offer = self.offers.get(table_id)
        if offer is None or offer.state is not OfferState.OPEN:
            raise ValueError("no open table with this id")
        if invite is not None and not self._trusted(offer):
            given = Invite.parse(invite)
            self._join_proved, self._join_invite = table_id, given
            offer.refused = None
            knocking = self._knocks.get(table_id)
            if knocking is not None and knocking[1] == given:
                return []  # its run is under way: a second would count as a wrong guess
            return self._knock(offer, given)
        if not self._trusted(offer):
            raise ValueError(
                f"the table {offer.name!r} was opened by a daemon you do not know (not one of "
                "your --peer): "
                "give its invite code, which its opener's screen shows"
            )
        self.joined = table_id
        return [(offer.opener, self._join_frame(offer, self.members_here()))]

    def proving(self, table_id: bytes) -> bool:
        """Whether a join by code to ``table_id`` waits for its opener's answer."""
        return self._join_proved == table_id

    def refusal(self, table_id: bytes) -> str | None:
        """What the opener of ``table_id`` said of the code we knocked with, for the player."""
        offer = self.offers.get(table_id)
        if offer is None or offer.refused is None:
            return None
        where = f"the table {offer.name!r} ({table_id.hex()[:8]})"
        if offer.refused == Answer.WAIT.value:
            return (
                f"the opener of {where} asks this daemon to wait: too many wrong invite codes "
                "came from it or its host; try again in a minute"
            )
        if offer.refused == Answer.LOCKED.value:
            return (
                f"the opener of {where} locked this daemon out after too many wrong invite "
                "codes: ask its player to run tarot unlock"
            )
        return f"that is not the invite code of {where}: its opener refused it"

    def unlock(self) -> int:
        """Lift every lockout of guessers of our codes (the opener's word: ``tarot unlock``):
        how many keys and hosts were locked out."""
        lifted = self.guesses.unlock()
        if lifted:
            log.warning("lobby: %d lockouts of invite-code guessers lifted", lifted)
        return lifted

    def filling(self) -> Offer:
        """The table we joined, if it is still taking seats (ValueError saying why not)."""
        offer = self.offers.get(self.joined) if self.joined is not None else None
        if offer is None:
            raise ValueError(
                "open or join a table first: a bot takes a seat at a table that is filling"
            )
        if offer.state is not OfferState.OPEN or offer.full:
            raise ValueError("the table is full: a bot takes a seat at a table that is filling")
        return offer

    def add_seat(self, identity: Identity, name: str, level: str) -> list[FrameOut]:
        """Host one more seat (a bot of ``level``) and sit it at the table we joined, while
        it is open."""
        offer = self.filling()
        self.hosted[identity.public_key] = (identity, name)
        self.bot_levels[identity.public_key] = level
        member = Member(identity.public_key, name, self.daemon_key, self.endpoint, level)
        if offer.opener == self.daemon_key:
            offer.members.append(member)
            return self._after_change(offer)
        return [(offer.opener, self._join_frame(offer, [member]))]

    def expect(self, slot: EventSlot) -> list[FrameOut]:
        """Form the event table ``slot`` (module docstring): open it if our seat is its first,
        else join it when its offer comes.  The table we sat at before is over for us."""
        if slot.table_id in self.slots:
            return []
        self.slots[slot.table_id] = slot
        joined = self.offers.get(self.joined) if self.joined is not None else None
        if joined is not None and joined.state is not OfferState.OPEN:
            self.joined = None
        if slot.opener != self.daemon_key:
            early = self._early_slots.pop(slot.table_id, None)
            return [] if early is None else self.receive(*early)
        members = [m for m in self.members_here() if m.key == slot.opener]
        self._coins[slot.table_id] = self._entropy(COIN_SIZE)
        offer = Offer(
            slot.table_id,
            slot.name,
            len(slot.keys),
            self.daemon_key,
            members,
            nonce=bytes(NONCE_SIZE),
            silence=slot.silence,
        )
        self.offers[slot.table_id] = offer
        self.joined = slot.table_id
        return self._after_change(offer)

    def forget_joined(self) -> None:
        """The table we sat at is over for us (its members went on without one of them): we
        are free to join another."""
        self.joined = None

    def leave(self) -> list[FrameOut]:
        """Take our seats back from the table we joined, while it has not started; an offer of
        ours is withdrawn."""
        if self.joined is None:
            return []
        offer = self.offers[self.joined]
        if offer.state is not OfferState.OPEN:
            raise ValueError("the table has started: it can no longer be left")
        self.joined = None
        if offer.opener == self.daemon_key:
            offer.state = OfferState.WITHDRAWN
            return [(BROADCAST, offer.to_wire())]
        return [(offer.opener, {"t": "leave", "table": offer.table_id, "keys": list(self.hosted)})]

    def announcements(self) -> list[FrameOut]:
        """Our open offers, to repeat now and then (peers that came late learn them)."""
        return [
            (destination, o.to_wire())
            for o in self.offers.values()
            if o.opener == self.daemon_key and o.state is OfferState.OPEN
            for destination in self._audience(o)
        ]

    def take_ready(self) -> list[ReadyTable]:
        ready, self._ready = self._ready, []
        return ready

    def forming(self, table_id: bytes, daemon: bytes) -> bool:
        """Whether ``table_id`` is the table our seats joined, full but not ready here yet,
        and seats ``daemon``: a member that has every coin starts its first deal, and its
        first messages may overtake the last coin on its way to us from another member."""
        offer = self.offers.get(table_id)
        return (
            table_id == self.joined
            and offer is not None
            and offer.state is OfferState.FULL
            and any(member.daemon == daemon for member in offer.members)
        )

    def tables(self) -> list[Offer]:
        return sorted(self.offers.values(), key=lambda o: (o.name, o.table_id))

    # --- Frames from peers ---------------------------------------------------------

    def receive(self, sender: bytes, frame: object, host: str = "") -> list[FrameOut]:
        """A frame from the daemon ``sender``, whose key proved itself from ``host`` (the
        throttle of guesses counts per host; "" for this machine's own daemons)."""
        if not isinstance(frame, dict):
            return []
        try:
            kind = frame.get("t")
            if kind == "prove":
                return self._on_prove(sender, frame, host)
            if kind == "knock":
                return self._on_knock(sender, frame, host)
            handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
            return handler(self, sender, frame) if handler else []
        except (KeyError, TypeError, ValueError):
            return []  # a malformed frame changes nothing

    def _on_offer(self, sender: bytes, frame: dict[str, Any]) -> list[FrameOut]:
        table_id, name, seats = (
            _id(frame["table"]),
            wire.text("name", frame["name"], MAX_NAME),
            frame["seats"],
        )
        if sender != frame["opener"] or type(seats) is not int or seats not in (3, 4, 5):
            return []
        members = [_member(raw) for raw in frame["members"]]
        state = OfferState(frame["state"])
        nonce = wire.blob("nonce", frame["nonce"], NONCE_SIZE)
        try:
            silence = SilenceCost.parse(frame.get("silence", SilenceCost.NOTHING.value))
        except ManifestError:
            return []
        if len(members) > seats or len({m.key for m in members}) < len(members):
            return []
        offer = self.offers.get(table_id)
        slot = self.slots.get(table_id)
        if offer is None and slot is not None:
            return self._on_event_offer(sender, slot, frame, members, state, nonce)
        if offer is None:
            if table_id != table_id_of(sender, nonce) and sender in self.fellows:
                if len(self._early_slots) < MAX_EARLY_SLOTS:
                    self._early_slots[table_id] = (sender, frame)  # its round is on its way to us
                return []
            if table_id != table_id_of(sender, nonce):
                self._refusals.tell(
                    "id",
                    sender,
                    "ignored an offer from %s: its table id %s is not derived from "
                    "its opener's key and nonce",
                    fingerprint(sender),
                    table_id.hex()[:8],
                )
                return []
            if not self._trusts(sender) and self._stranger_offers(sender) >= MAX_STRANGER_OFFERS:
                self._refusals.tell(
                    "offers",
                    sender,
                    "ignored further offers from %s: it is none of our --peer, and has %d "
                    "open offers already",
                    fingerprint(sender),
                    MAX_STRANGER_OFFERS,
                )
                return []
            self._forget_stale_offers()
            offer = self.offers[table_id] = Offer(
                table_id, name, seats, sender, members, state, nonce, silence=silence
            )
            if self.wanted == (name, seats) and silence is not self.silence:
                self._refusals.tell(
                    "rule",
                    sender,
                    "table %s: not joining the offer of %s: a silence before the reveal "
                    "costs %s there, and %s here (tarotd --silence): start with the same rule",
                    name,
                    fingerprint(sender),
                    silence.value,
                    self.silence.value,
                )
            if self.wanted == (name, seats) and not self._trusted(offer) and not self._code_given:
                self._refusals.tell(
                    "offer",
                    sender,
                    "table %s: not joining the offer of %s: it is none of our --peer, "
                    "and we were given no invite code",
                    name,
                    fingerprint(sender),
                )
        elif (
            offer.opener == sender
            and offer.state is OfferState.OPEN
            and state in (OfferState.OPEN, OfferState.WITHDRAWN)
        ):
            offer.members, offer.state = members, state  # the manifest, not an offer, closes it
        if self.offers[table_id].state is OfferState.WITHDRAWN and self.joined == table_id:
            self.joined = None
        return self._knock_if_wanted(self.offers[table_id]) + self._pursue()

    def _on_event_offer(
        self,
        sender: bytes,
        slot: EventSlot,
        frame: dict[str, Any],
        members: list[Member],
        state: OfferState,
        nonce: bytes,
    ) -> list[FrameOut]:
        """The offer of an event table our seat is expected at: from the daemon of its first
        seat only, under the event's rule and size; we join it at once."""
        if (
            sender != slot.opener
            or frame["seats"] != len(slot.keys)
            or state is not OfferState.OPEN
        ):
            self._refusals.tell(
                "slot",
                sender,
                "event table %s: ignored an offer from %s: the round plan has %s open it, "
                "with %d seats",
                slot.table_id.hex()[:8],
                fingerprint(sender),
                fingerprint(slot.opener),
                len(slot.keys),
            )
            return []
        offer = Offer(
            slot.table_id,
            slot.name,
            len(slot.keys),
            sender,
            members,
            state,
            nonce,
            silence=slot.silence,
        )
        self.offers[slot.table_id] = offer
        self.joined = slot.table_id
        ours = [m for m in self.members_here() if m.key in slot.keys]
        return [(sender, self._join_frame(offer, ours))]

    def _on_join(self, sender: bytes, frame: dict[str, Any]) -> list[FrameOut]:
        offer = self.offers.get(_id(frame["table"]))
        if offer is None or offer.opener != self.daemon_key or offer.state is not OfferState.OPEN:
            return []
        slot = self.slots.get(offer.table_id)
        if slot is not None:
            return self._on_event_join(sender, slot, offer, frame)
        if not (sender in offer.invited or self._trusts(sender)):
            self._refusals.tell(
                "join",
                sender,
                "table %s: refused the seats of %s: it is none of our --peer, and did not "
                "prove the table's invite code",
                offer.name,
                fingerprint(sender),
            )
            return []
        for member in (_member(raw) for raw in frame["members"]):
            known = {m.key for m in offer.members}
            if member.daemon == sender and member.key not in known and not offer.full:
                offer.members.append(member)
        return self._after_change(offer)

    def _on_event_join(
        self, sender: bytes, slot: EventSlot, offer: Offer, frame: dict[str, Any]
    ) -> list[FrameOut]:
        """A join of an event table we open: only the seats the plan puts there, each hosted
        by its own daemon."""
        known = {m.key for m in offer.members}
        for member in (_member(raw) for raw in frame["members"]):
            if member.key not in slot.keys or member.key != sender or member.daemon != sender:
                self._refusals.tell(
                    "slot-join",
                    sender,
                    "event table %s: refused the seat %s of %s: the round plan "
                    "does not seat it here",
                    slot.table_id.hex()[:8],
                    fingerprint(member.key),
                    fingerprint(sender),
                )
            elif member.key not in known:
                offer.members.append(member)
        return self._after_change(offer)

    def _on_leave(self, sender: bytes, frame: dict[str, Any]) -> list[FrameOut]:
        offer = self.offers.get(_id(frame["table"]))
        if offer is None or offer.opener != self.daemon_key or offer.state is not OfferState.OPEN:
            return []
        keys = frame["keys"]
        if not isinstance(keys, list) or len(keys) > offer.seats:
            return []
        leaving = {wire.blob("a key leaving", key, 32) for key in keys}
        offer.members = [m for m in offer.members if not (m.key in leaving and m.daemon == sender)]
        return self._after_change(offer)

    def _on_manifest(self, sender: bytes, frame: dict[str, Any]) -> list[FrameOut]:
        table_id = _id(frame["table"])
        offer = self.offers.get(table_id)
        if offer is None or sender != offer.opener or table_id != self.joined:
            return []  # we sign only the table our seats joined
        if offer.state not in (OfferState.OPEN, OfferState.WITHDRAWN):
            return []
        try:
            members = self._manifest_members(offer, frame.get("members"))
            silence = SilenceCost.parse(frame.get("silence", SilenceCost.NOTHING.value))
            slot = self.slots.get(table_id)
            rule, whose = (
                (slot.silence, "the event's")
                if slot is not None
                else (self.silence, "this daemon's")
            )
            if silence is not rule:
                raise ManifestRefused(
                    f"it says a silence costs {silence.value}, and {whose} rule is {rule.value}"
                )
            if slot is not None and tuple(m.key for m in members) != slot.keys:
                raise ManifestRefused(
                    "it does not seat the members of the event's round plan, in its order"
                )
        except (ManifestRefused, ManifestError) as why:
            log.warning(
                "lobby: table %s (%s): refused the manifest of %s, nothing changed: %s",
                offer.name,
                table_id.hex()[:8],
                fingerprint(sender),
                why,
            )
            return []
        offer.members, offer.state, offer.silence = members, OfferState.FULL, silence
        out = self._sign(offer)
        for early_sender, early in self._early.pop(table_id, []):
            out += self.receive(early_sender, early)
        return out

    def _manifest_members(self, offer: Offer, raw: object) -> list[Member]:
        """The members of a manifest for ``offer``, if it holds as a whole — one per seat, each
        well formed, no key twice, every seat we host at our daemon and at least one of ours —
        or :class:`ManifestRefused` saying what does not, before anything is changed: a
        manifest taken in part would leave the table neither open nor able to start."""
        if not isinstance(raw, list):
            raise ManifestRefused("its members are not a list")
        if len(raw) != offer.seats:
            raise ManifestRefused(f"{len(raw)} members for {offer.seats} seats")
        members = []
        for seat, item in enumerate(raw):
            try:
                members.append(_member(item))
            except ValueError as error:
                raise ManifestRefused(f"seat {seat}: {error}") from None
        if len({m.key for m in members}) < len(members):
            raise ManifestRefused("a seat's key appears twice")
        if any((m.key in self.hosted) != (m.daemon == self.daemon_key) for m in members):
            raise ManifestRefused(
                "it puts a seat of ours at another daemon, or a seat we do not host at ours"
            )
        if not any(m.key in self.hosted for m in members):
            raise ManifestRefused("none of our seats is in it")
        if any(m.key in self.hosted and m.bot != self.bot_levels.get(m.key, "") for m in members):
            raise ManifestRefused("it calls a person of ours a bot, or a bot of ours a person")
        return members

    def _forget_stale_offers(self) -> None:
        """Keep at most :data:`MAX_OFFERS` offers heard: a flood of offers is not a memory leak,
        and does not push out the offers we trust — those of strangers go first."""
        others = [
            t for t, o in self.offers.items() if t != self.joined and o.opener != self.daemon_key
        ]
        others.sort(key=lambda t: self._trusted(self.offers[t]))  # stable: the oldest first
        for table_id in others[: max(0, len(others) - MAX_OFFERS + 1)]:
            del self.offers[table_id]
            self._early.pop(table_id, None)
            self._knocks.pop(table_id, None)
            self._knock_after.pop(table_id, None)

    def _wait_for_manifest(self, sender: bytes, frame: dict[str, Any]) -> list[FrameOut]:
        """A signature or a coin may overtake the manifest (it comes from another daemon)."""
        waiting = self._early.setdefault(_id(frame["table"]), [])
        if len(waiting) < 64:
            waiting.append((sender, frame))
        return []

    def _on_sign(self, sender: bytes, frame: dict[str, Any]) -> list[FrameOut]:
        table_id, key = _id(frame["table"]), wire.blob("key", frame["key"], 32)
        offer = self.offers.get(table_id)
        if offer is None:
            return []
        if offer.state in (OfferState.OPEN, OfferState.WITHDRAWN):
            return self._wait_for_manifest(sender, frame)
        if offer.state is not OfferState.FULL:
            return []
        member = next((m for m in offer.members if m.key == key and m.daemon == sender), None)
        signature, commit = (
            wire.blob("sig", frame["sig"], 64),
            wire.blob("commit", frame["commit"], COMMITMENT_SIZE),
        )
        if member is None or not verify(key, signature, MANIFEST_DOMAIN + _manifest_of(offer)):
            return []
        self._signatures.setdefault(table_id, {}).setdefault(key, signature)
        self._tosses[table_id].commit(key, commit)
        return self._seal_if_signed(offer, self._tosses[table_id])

    def _toss_of(self, sender: bytes, frame: dict[str, Any]) -> tuple[Offer, CoinToss] | None:
        """The full table a ``seal`` or ``coin`` frame is for, and its coin, if ``sender`` is
        the daemon of one of its members.  Neither can overtake the manifest: a member seals
        only once it holds our commitment, sent once we had the manifest."""
        offer = self.offers.get(_id(frame["table"]))
        toss = self._tosses.get(offer.table_id) if offer is not None else None
        if offer is None or toss is None or offer.state is not OfferState.FULL:
            return None
        return (offer, toss) if sender in toss.daemons.values() else None

    def _on_seal(self, sender: bytes, frame: dict[str, Any]) -> list[FrameOut]:
        found = self._toss_of(sender, frame)
        seals = frame["seals"]
        if found is None or not isinstance(seals, list) or len(seals) > len(found[1].daemons):
            return []
        offer, toss = found
        for entry in seals:
            if isinstance(entry, list) and len(entry) == 2:
                toss.add_seal(entry[0], sender, entry[1])
        return self._reveal_if_sealed(offer, toss)

    def _on_coin(self, sender: bytes, frame: dict[str, Any]) -> list[FrameOut]:
        """Coins revealed or relayed.  One before we revealed ours is no honest member's: an
        honest member sends its coins after every seal, which make our set whole."""
        found = self._toss_of(sender, frame)
        coins = frame["coins"]
        if found is None or not isinstance(coins, list) or len(coins) > len(found[1].daemons):
            return []
        offer, toss = found
        if not toss.revealed:
            return []
        for entry in coins:
            if isinstance(entry, list) and len(entry) == 3:
                key, coin, relays = entry
                toss.take(key, coin, relays, self._now)
        if not toss.withheld:
            self._draw(offer, toss)
        return []

    # --- Our side of the protocol ----------------------------------------------------

    def _trusted(self, offer: Offer) -> bool:
        """Whether we may join ``offer``, or withdraw ours for it: ours, a ``--peer``'s, or one
        that proved an invite code we hold."""
        return (
            offer.opener == self.daemon_key
            or offer.invite is not None
            or self._trusts(offer.opener)
        )

    def verified(self, offer: Offer) -> bool:
        """Whether ``offer`` comes from a daemon we have a reason to trust (``tables`` lists
        the others apart, as unverified)."""
        return self._trusted(offer)

    def _stranger_offers(self, opener: bytes) -> int:
        """The open offers of ``opener`` we keep and do not trust."""
        return sum(
            o.opener == opener and o.state is OfferState.OPEN and not self._trusted(o)
            for o in self.offers.values()
        )

    def _join_frame(self, offer: Offer, members: list[Member]) -> dict[str, Any]:
        """A join of ``members`` to ``offer`` (an opener that does not list us as ``--peer``
        seats us if we proved its invite code first)."""
        return {"t": "join", "table": offer.table_id, "members": [m.to_wire() for m in members]}

    # --- The invite code: CPace runs (protocol.pake) ------------------------------------

    def _knock_if_wanted(self, offer: Offer) -> list[FrameOut]:
        """Knock at ``offer`` with the code we were given, if it is the table we want, and we
        have not knocked there yet — nor failed too often.  At a ``--peer``'s offer too: we
        trust its opener, but it may not list us, and our proof is what seats us then."""
        if (
            self.invite is None
            or not (self._code_given or offer.opener in self._proven)
            or self.wanted != (offer.name, offer.seats)
            or offer.silence is not self.silence
            or offer.state is not OfferState.OPEN
            or offer.opener == self.daemon_key
            or offer.invite is not None  # proved already
            or offer.table_id in self._knocks
            or offer.refused is not None
            or self._failed_knocks + len(self._knocks) >= MAX_FAILED_KNOCKS
            or (self._now or 0.0) < self._knock_after.get(offer.table_id, float("-inf"))
        ):
            return []
        return self._knock(offer, self.invite)

    def _knock(self, offer: Offer, invite: Invite) -> list[FrameOut]:
        """Start a run of CPace with the opener of ``offer``: our share for its table, its key
        and ours, under ``invite``."""
        run = Joining.start(
            invite.secret,
            channel(offer.table_id, self.daemon_key, offer.opener),
            self._secrets,
        )
        self._knocks[offer.table_id] = (run, invite)
        self._knocked_at[offer.table_id] = self._now
        frame = {"t": "knock", "table": offer.table_id, "sid": run.sid, "share": run.share}
        return [(offer.opener, frame)]

    def _on_knock(self, sender: bytes, frame: dict[str, Any], host: str) -> list[FrameOut]:
        """A joiner's share for a table we opened under a code: answered with ours, unless the
        key or host must wait or is locked out.  A key that knocks again while its run waits
        for its proof left that run unproved: counted as a wrong guess — knocks are not free."""
        table_id = _id(frame["table"])
        offer = self.offers.get(table_id)
        if (
            offer is None
            or offer.opener != self.daemon_key
            or offer.invite is None
            or offer.state is not OfferState.OPEN
        ):
            return []
        sid, share = (
            wire.blob("sid", frame["sid"], SID_SIZE),
            wire.blob("share", frame["share"], SHARE_SIZE),
        )
        now = self._now or 0.0
        if self._runs.pop((sender, table_id), None) is not None:
            self._count_wrong(offer, sender, host, now)
        answer, locked = self.guesses.may_answer(sender, host, now)
        self._tell_lockouts(offer, locked, "knocks while told to wait")
        if answer is not Answer.ANSWER:
            return [(sender, {"t": "refused", "table": table_id, "sid": sid, "why": answer.value})]
        ci = channel(table_id, sender, self.daemon_key)
        try:
            run = Admitting.answer(offer.invite.secret, ci, sid, share, self._secrets)
        except PakeError:
            return []
        while len(self._runs) >= MAX_RUNS:
            del self._runs[next(iter(self._runs))]  # the oldest: its joiner will knock again
        self._runs[(sender, table_id)] = run
        return [(sender, {"t": "answer", "table": table_id, "sid": sid, "share": run.share})]

    def _on_answer(self, sender: bytes, frame: dict[str, Any]) -> list[FrameOut]:
        """The opener's share: our proof of the code goes back (the joiner's tag comes first,
        so that the opener learns of every wrong guess)."""
        table_id = _id(frame["table"])
        offer, knock = self.offers.get(table_id), self._knocks.get(table_id)
        if offer is None or knock is None or sender != offer.opener:
            return []
        run, _ = knock
        if wire.blob("sid", frame["sid"], SID_SIZE) != run.sid:
            return []
        try:
            tag = run.answer(wire.blob("share", frame["share"], SHARE_SIZE))
        except PakeError:
            del self._knocks[table_id]
            self._failed_knocks += 1
            offer.refused = "code"
            return self._pursue()
        return [(sender, {"t": "prove", "table": table_id, "sid": run.sid, "tag": tag})]

    def _on_prove(self, sender: bytes, frame: dict[str, Any], host: str) -> list[FrameOut]:
        """A joiner's proof of our code: a wrong one is a guess, counted; a right one seats its
        joins, and our own proof goes back."""
        table_id = _id(frame["table"])
        run = self._runs.get((sender, table_id))
        offer = self.offers.get(table_id)
        if run is None or offer is None or wire.blob("sid", frame["sid"], SID_SIZE) != run.sid:
            return []
        del self._runs[(sender, table_id)]
        tag = run.proved(wire.blob("tag", frame["tag"], TAG_SIZE))
        if tag is None:
            self._count_wrong(offer, sender, host, self._now or 0.0)
            why = Answer.LOCKED.value if self.guesses.is_locked(sender, host) else "code"
            return [(sender, {"t": "refused", "table": table_id, "sid": run.sid, "why": why})]
        self.guesses.count_right(sender)
        offer.invited.add(sender)
        self._proved(sender)
        out: list[FrameOut] = [
            (sender, {"t": "proven", "table": table_id, "sid": run.sid, "tag": tag})
        ]
        if offer.invite is self.invite:
            self._proven.add(sender)
            for theirs in [o for o in self.offers.values() if o.opener == sender]:
                out += self._knock_if_wanted(theirs)
        return out

    def _count_wrong(self, offer: Offer, sender: bytes, host: str, now: float) -> None:
        self._refusals.tell(
            "guess",
            sender,
            "table %s: %s%s did not prove the table's invite code (a wrong guess, counted)",
            offer.name,
            fingerprint(sender),
            f" at {host}" if host else "",
        )
        locked = self.guesses.count_wrong(sender, host, now)
        self._tell_lockouts(offer, locked, "wrong invite codes")

    def _tell_lockouts(self, offer: Offer, locked: list[tuple[Kind, str]], why: str) -> None:
        for kind, who in locked:
            log.warning(
                "lobby: table %s: %s %s locked out after %d %s — its knocks are no longer "
                "answered; `tarot unlock` lifts it",
                offer.name,
                kind.value,
                fingerprint(bytes.fromhex(who)) if kind is Kind.KEY else who,
                self.guesses.limits[kind]
                if why == "wrong invite codes"
                else self.guesses.lock_refused,
                why,
            )

    def _on_proven(self, sender: bytes, frame: dict[str, Any]) -> list[FrameOut]:
        """The opener's proof: the offer is the table of our code — trusted from now on, and
        joined if we were asked to join it."""
        table_id = _id(frame["table"])
        offer, knock = self.offers.get(table_id), self._knocks.get(table_id)
        if offer is None or knock is None or sender != offer.opener:
            return []
        run, invite = knock
        if wire.blob("sid", frame["sid"], SID_SIZE) != run.sid or not run.confirms(
            wire.blob("tag", frame["tag"], TAG_SIZE)
        ):
            return []
        del self._knocks[table_id]
        offer.invite, offer.refused = invite, None
        if self.joined == table_id and offer.state is OfferState.OPEN:
            # joined before the proof (a --peer's offer): the opener may have refused it then
            return [(offer.opener, self._join_frame(offer, self.members_here())), *self._pursue()]
        if self._join_proved == table_id:
            self._join_proved = None
            if offer.state is OfferState.OPEN:
                out = self.leave() if self.joined not in (None, table_id) else []
                self.joined = table_id
                return out + [(offer.opener, self._join_frame(offer, self.members_here()))]
        return self._pursue()

    def _on_refused(self, sender: bytes, frame: dict[str, Any]) -> list[FrameOut]:
        """The opener refused our knock: not its code, or we (or our host) must wait, or are
        locked out.  We knock again after a wait, never after the others."""
        table_id = _id(frame["table"])
        offer, knock = self.offers.get(table_id), self._knocks.get(table_id)
        if offer is None or knock is None or sender != offer.opener:
            return []
        if wire.blob("sid", frame["sid"], SID_SIZE) != knock[0].sid:
            return []
        why = Answer(frame["why"]) if frame["why"] in ("wait", "locked") else None
        del self._knocks[table_id]
        if why is Answer.WAIT:
            self._knock_after[table_id] = (self._now or 0.0) + KNOCK_AGAIN
            return self._pursue()
        self._failed_knocks += 1
        offer.refused = why.value if why is not None else "code"
        if self._join_proved == table_id:
            self._join_proved = None
        log.warning(
            "lobby: table %s (%s): its opener %s refused our invite code: %s",
            offer.name,
            table_id.hex()[:8],
            fingerprint(sender),
            "we are locked out (too many wrong codes from this daemon or its host)"
            if why is Answer.LOCKED
            else "it is not the table's code",
        )
        return self._pursue()  # a --peer's offer is joined all the same

    def _pursue(self) -> list[FrameOut]:
        """Converge on the wanted table: the open offer of that name with the smallest id
        among those we trust; none, and we open it (under the code we were given, if any)."""
        if self.wanted is None:
            return []
        name, seats = self.wanted
        if self.joined is not None and self.offers[self.joined].state in (
            OfferState.FULL,
            OfferState.READY,
        ):
            return []
        candidates = sorted(
            o.table_id
            for o in self.offers.values()
            if o.name == name
            and o.seats == seats
            and o.silence is self.silence
            and o.state is OfferState.OPEN
            and self._trusted(o)
        )
        if not candidates:
            if self.joined is not None:
                return []
            offer = self._open(name, seats, self.invite)
            self.invite = offer.invite  # a code drawn now is the wanted table's from now on
            return self._after_change(offer)
        best = candidates[0]
        if self.joined == best or best in self._knocks:
            return []  # there, or proving our code to its opener first: it may not list us
        return self.leave() + self.join(best)

    def _audience(self, offer: Offer) -> list[bytes]:
        """Who hears ``offer``: every peer, but for an event table its members alone (nobody
        else expects it, and would only refuse it)."""
        slot = self.slots.get(offer.table_id)
        return [BROADCAST] if slot is None else [key for key in slot.keys if key != self.daemon_key]

    def _after_change(self, offer: Offer) -> list[FrameOut]:
        out: list[FrameOut] = [
            (destination, offer.to_wire()) for destination in self._audience(offer)
        ]
        if offer.full and offer.state is OfferState.OPEN and offer.opener == self.daemon_key:
            offer.state = OfferState.FULL
            slot = self.slots.get(offer.table_id)
            if slot is not None:  # the plan's seat order, not the order of the joins
                offer.members.sort(key=lambda m: slot.keys.index(m.key))
            members = [m.to_wire() for m in offer.members]
            frame = {
                "t": "manifest",
                "table": offer.table_id,
                "members": members,
                "silence": offer.silence.value,
            }
            out += [(daemon, frame) for daemon in _daemons(offer) if daemon != self.daemon_key]
            out += self._sign(offer)
        return out

    def _to_members(self, offer: Offer, frame: dict[str, Any]) -> list[FrameOut]:
        """``frame`` to the daemon of every member of ``offer`` but ours."""
        return [(daemon, frame) for daemon in _daemons(offer) if daemon != self.daemon_key]

    def _sign(self, offer: Offer) -> list[FrameOut]:
        """Each seat hosted here signs the manifest and commits to our coin for the dealer."""
        manifest = _manifest_of(offer)
        coin = self._coins.setdefault(offer.table_id, self._entropy(COIN_SIZE))
        ours = [self.hosted[m.key][0] for m in offer.members if m.key in self.hosted]
        daemons = {m.key: m.daemon for m in offer.members}
        toss = CoinToss(offer.table_id, manifest, daemons, ours[0], self.timeout)
        self._tosses[offer.table_id] = toss
        out: list[FrameOut] = []
        for identity in ours:
            key = identity.public_key
            signature = identity.sign(MANIFEST_DOMAIN + manifest)
            commit = commitment(offer.table_id, key, coin)
            self._signatures.setdefault(offer.table_id, {})[key] = signature
            toss.commit(key, commit)
            frame = {"t": "sign", "table": offer.table_id, "key": key, "sig": signature}
            out += self._to_members(offer, {**frame, "commit": commit})
        return out + self._seal_if_signed(offer, toss)

    def _hosted_in(self, offer: Offer) -> list[bytes]:
        """The keys of the seats of ``offer`` hosted here, in seat order."""
        return [m.key for m in offer.members if m.key in self.hosted]

    def _seal_if_signed(self, offer: Offer, toss: CoinToss) -> list[FrameOut]:
        """Once every member's signature and commitment is in, each seat hosted here seals
        the commitments: no coin is revealed before every member sealed the same ones."""
        document = toss.document
        if document is None or toss.signer.public_key in toss.seals:
            return []
        seals = [[key, self.hosted[key][0].sign(document)] for key in self._hosted_in(offer)]
        for key, seal in seals:
            toss.add_seal(key, self.daemon_key, seal)
        frame = {"t": "seal", "table": offer.table_id, "seals": seals}
        return self._to_members(offer, frame) + self._reveal_if_sealed(offer, toss)

    def _reveal_if_sealed(self, offer: Offer, toss: CoinToss) -> list[FrameOut]:
        """Once every member's seal is in: every seal on to the others (one that reached us
        alone reaches them), then our coins; the rounds of reveals start now."""
        if not toss.sealed or toss.revealed:
            return []
        toss.reveal(self._now)
        coin, hosted = self._coins[offer.table_id], self._hosted_in(offer)
        for key in hosted:
            toss.take(key, coin, [], self._now)
        seals = {"t": "seal", "table": offer.table_id, "seals": [*map(list, toss.seals.items())]}
        coins = {"t": "coin", "table": offer.table_id, "coins": [[key, coin, []] for key in hosted]}
        if not toss.withheld:
            self._draw(offer, toss)
        return self._to_members(offer, seals) + self._to_members(offer, coins)

    def heartbeat(self, now: float) -> list[FrameOut]:
        """The time, at the daemon's heartbeat: the dealer coins' rounds run on it.  The coins
        taken since the last one are relayed, and a table whose last round is over draws its
        dealer without the coins that did not come (:mod:`tarotd.coin`)."""
        self._now = now
        out: list[FrameOut] = []
        for table_id, at in list(self._knocked_at.items()):
            if table_id not in self._knocks:
                del self._knocked_at[table_id]
            elif at is None:
                self._knocked_at[table_id] = now  # knocked before the first heartbeat
            elif now - at > KNOCK_SILENCE:  # an opener that never answers: a failed run
                del self._knocks[table_id], self._knocked_at[table_id]
                self._failed_knocks += 1
                if table_id in self.offers:
                    self.offers[table_id].refused = "silent"
                if self._join_proved == table_id:
                    self._join_proved = None
        for table_id in [t for t, at in self._knock_after.items() if at <= now]:
            del self._knock_after[table_id]
            offer = self.offers.get(table_id)
            if offer is not None:
                if self._join_proved == table_id and self._join_invite is not None:
                    out += self._knock(offer, self._join_invite)
                else:
                    out += self._knock_if_wanted(offer)
        for table_id, toss in list(self._tosses.items()):
            offer = self.offers.get(table_id)
            if offer is None:  # forgotten: a table left for another
                del self._tosses[table_id]
                continue
            toss.clock(now)
            for daemon, coins in toss.take_relays().items():
                out.append((daemon, {"t": "coin", "table": table_id, "coins": coins}))
            if offer.state is OfferState.FULL and toss.due(now):
                self._draw(offer, toss)
            if offer.state is not OfferState.FULL:  # drawn, and its last coins relayed
                del self._tosses[table_id]
        return out

    def _draw(self, offer: Offer, toss: CoinToss) -> None:
        """The first dealer, from the coins taken; each member whose coin is missing named."""
        members = tuple(offer.members)
        offer.withheld = toss.withheld
        for member in members:
            if member.key in offer.withheld:
                log.warning(
                    "lobby: table %s (%s): %s (%s) did not reveal its coin: the first dealer "
                    "is drawn without it",
                    offer.name,
                    offer.table_id.hex()[:8],
                    member.name,
                    fingerprint(member.key),
                )
        setup = TableSetup(
            offer.table_id,
            tuple(m.key for m in members),
            tuple(m.name for m in members),
            offer.silence,
        )
        signed = self._signatures[offer.table_id]
        signatures = tuple(signed[m.key] for m in members)
        offer.state = OfferState.READY
        self._ready.append(
            ReadyTable(setup, members, toss.dealer(), toss.manifest, signatures, offer.name)
        )


def _manifest_of(offer: Offer) -> bytes:
    """The manifest of a full ``offer``: what every member signs."""
    return manifest_bytes(offer.table_id, offer.name, offer.members, offer.silence)


def _daemons(offer: Offer) -> list[bytes]:
    return list(dict.fromkeys(m.daemon for m in offer.members))


def _id(value: object) -> bytes:
    return wire.blob("table", value, ID_SIZE)


def _member(raw: object) -> Member:
    """``[key, name, daemon, endpoint]``, and a bot's level for a seat a bot plays."""
    fields = wire.array("a member", raw, max_length=5)
    if len(fields) < 4:
        raise wire.FieldError("a member", f"is an array of 4 or 5 items, got {len(fields)}")
    key, name, daemon, endpoint, *bot = fields
    level = wire.text("a member's bot level", bot[0], MAX_BOT_LEVEL, 1) if bot else ""
    if level and not level.isalnum():
        raise wire.FieldError("a member's bot level", "is a word of letters and digits")
    return Member(
        _public_key("a member's key", key),
        wire.text("a member's name", name, MAX_NAME),
        _public_key("a member's daemon", daemon),
        wire.text("a member's endpoint", endpoint, MAX_MEMBER_ENDPOINT),
        level,
    )


def _public_key(what: str, value: object) -> bytes:
    key = wire.blob(what, value, 32)
    if not is_valid_public_key(key):
        raise wire.FieldError(what, "is not a valid Ed25519 public key")
    return key


_HANDLERS = {
    "answer": Lobby._on_answer,
    "proven": Lobby._on_proven,
    "refused": Lobby._on_refused,
    "offer": Lobby._on_offer,
    "join": Lobby._on_join,
    "leave": Lobby._on_leave,
    "manifest": Lobby._on_manifest,
    "sign": Lobby._on_sign,
    "seal": Lobby._on_seal,
    "coin": Lobby._on_coin,
}
