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

A manifest is checked whole before anything changes: every member well formed and no key
twice (:func:`~tarotd.lobby.frames.decode`), then exactly one member per seat, our seats at our
daemon and at least one of them there (:meth:`Lobby._manifest_members`); a manifest that fails
is refused, with the reason logged, and the offer stays as it was.

Every frame from a peer is read once, by :func:`tarotd.lobby.frames.decode`, the one place its
untrusted fields are checked: :meth:`Lobby.receive` refuses a malformed one (said in the log once
per daemon) and hands a typed frame to the handler of its kind, so a peer can make the lobby do
nothing worse than refuse its frame.  The lobby's other modules: :mod:`~tarotd.lobby.invite`
(the code), :mod:`~tarotd.lobby.tables` (an offer, an event's slot, a table ready to play).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from typing import Any, Final

from protocol import wire
from protocol.pake import Admitting, Joining, PakeError, channel
from protocol.refusal import Refusal, Refused
from protocol.replication.identity import Identity, fingerprint, verify
from protocol.replication.manifest import MANIFEST_DOMAIN, SilenceCost
from protocol.replication.public import TableSetup
from tarotd.coin import COIN_SIZE, CoinToss, Reveal, commitment
from tarotd.guesses import Answer, Guesses, Kind
from tarotd.lobby import frames
from tarotd.lobby.frames import NONCE_SIZE, Member, OfferState, WhyRefused
from tarotd.lobby.invite import Invite
from tarotd.lobby.tables import EventSlot, Offer, ReadyTable, manifest_bytes, table_id_of

log = logging.getLogger(__name__)

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
MAX_EARLY: Final = 64  #: signatures kept per table until its manifest comes
#: (cause, daemon) pairs told in the log, then one line saying the rest are not
MAX_REFUSALS_LOGGED: Final = 64
#: Frames to one daemon (its key) or to every known peer (``BROADCAST``).
BROADCAST = b""

FrameOut = tuple[bytes, dict[str, Any]]  #: (destination daemon key or BROADCAST, frame)


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
        #: signatures that came before the manifest, by table
        self._early: dict[bytes, list[tuple[bytes, frames.Sign]]] = {}
        self._refusals = _Refusals()
        #: event tables our seats are expected at, by table id
        self.slots: dict[bytes, EventSlot] = {}
        #: The players of the events we are in: an offer of theirs under an id we do not know
        #: yet is an event table whose round we have not heard of — kept, not refused.
        self.fellows: frozenset[bytes] = frozenset()
        self._early_slots: dict[bytes, tuple[bytes, frames.Offer]] = {}

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
            raise Refused("a table has 3, 4 or 5 seats", Refusal.SEATS)
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
            raise Refused("no open table with this id", Refusal.NO_OPEN_TABLE)
        if invite is not None and not self._trusted(offer):
            given = Invite.parse(invite)
            self._join_proved, self._join_invite = table_id, given
            offer.refused = None
            knocking = self._knocks.get(table_id)
            if knocking is not None and knocking[1] == given:
                return []  # its run is under way: a second would count as a wrong guess
            return self._knock(offer, given)
        if not self._trusted(offer):
            raise Refused(
                f"the table {offer.name!r} was opened by a daemon you do not know (not one of "
                "your --peer): "
                "give its invite code, which its opener's screen shows",
                Refusal.OPENER_UNKNOWN,
                table=offer.name,
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
            raise Refused(
                "open or join a table first: a bot takes a seat at a table that is filling",
                Refusal.NO_TABLE_TO_FILL,
            )
        if offer.state is not OfferState.OPEN or offer.full:
            raise Refused(
                "the table is full: a bot takes a seat at a table that is filling",
                Refusal.TABLE_FULL,
            )
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
            return [] if early is None else self._on_offer(*early, "")
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
            raise Refused("the table has started: it can no longer be left", Refusal.TABLE_STARTED)
        self.joined = None
        if offer.opener == self.daemon_key:
            offer.state = OfferState.WITHDRAWN
            return [(BROADCAST, offer.frame().to_wire())]
        return [(offer.opener, frames.Leave(offer.table_id, tuple(self.hosted)).to_wire())]

    def announcements(self) -> list[FrameOut]:
        """Our open offers, to repeat now and then (peers that came late learn them)."""
        return [
            (destination, o.frame().to_wire())
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

    def receive(self, sender: bytes, raw: object, host: str = "") -> list[FrameOut]:
        """A frame from the daemon ``sender``, whose key proved itself from ``host`` (the
        throttle of guesses counts per host; "" for this machine's own daemons): read once
        (:func:`~tarotd.lobby.frames.decode`), refused if malformed, else handled by its kind."""
        try:
            frame = frames.decode(raw)
        except wire.FieldError as why:
            self._refusals.tell(
                "frame",
                sender,
                "refused a frame of %s, nothing changed: %s",
                fingerprint(sender),
                why,
            )
            return []
        return _HANDLERS[frame.kind](self, sender, frame, host)

    def _on_offer(self, sender: bytes, frame: frames.Offer, host: str) -> list[FrameOut]:
        table_id, name, seats, nonce = frame.table_id, frame.name, frame.seats, frame.nonce
        if sender != frame.opener:
            return []
        offer = self.offers.get(table_id)
        slot = self.slots.get(table_id)
        if offer is None and slot is not None:
            return self._on_event_offer(sender, slot, frame)
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
                table_id,
                name,
                seats,
                sender,
                list(frame.members),
                frame.state,
                nonce,
                silence=frame.silence,
            )
            if self.wanted == (name, seats) and frame.silence is not self.silence:
                self._refusals.tell(
                    "rule",
                    sender,
                    "table %s: not joining the offer of %s: a silence before the reveal "
                    "costs %s there, and %s here (tarotd --silence): start with the same rule",
                    name,
                    fingerprint(sender),
                    frame.silence.value,
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
            and frame.state in (OfferState.OPEN, OfferState.WITHDRAWN)
        ):
            # the manifest, not an offer, closes it
            offer.members, offer.state = list(frame.members), frame.state
        if self.offers[table_id].state is OfferState.WITHDRAWN and self.joined == table_id:
            self.joined = None
        return self._knock_if_wanted(self.offers[table_id]) + self._pursue()

    def _on_event_offer(
        self, sender: bytes, slot: EventSlot, frame: frames.Offer
    ) -> list[FrameOut]:
        """The offer of an event table our seat is expected at: from the daemon of its first
        seat only, under the event's rule and size; we join it at once."""
        if (
            sender != slot.opener
            or frame.seats != len(slot.keys)
            or frame.state is not OfferState.OPEN
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
            list(frame.members),
            frame.state,
            frame.nonce,
            silence=slot.silence,
        )
        self.offers[slot.table_id] = offer
        self.joined = slot.table_id
        ours = [m for m in self.members_here() if m.key in slot.keys]
        return [(sender, self._join_frame(offer, ours))]

    def _on_join(self, sender: bytes, frame: frames.Join, host: str) -> list[FrameOut]:
        offer = self.offers.get(frame.table_id)
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
        for member in frame.members:
            known = {m.key for m in offer.members}
            if member.daemon == sender and member.key not in known and not offer.full:
                offer.members.append(member)
        return self._after_change(offer)

    def _on_event_join(
        self, sender: bytes, slot: EventSlot, offer: Offer, frame: frames.Join
    ) -> list[FrameOut]:
        """A join of an event table we open: only the seats the plan puts there, each hosted
        by its own daemon."""
        known = {m.key for m in offer.members}
        for member in frame.members:
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

    def _on_leave(self, sender: bytes, frame: frames.Leave, host: str) -> list[FrameOut]:
        offer = self.offers.get(frame.table_id)
        if offer is None or offer.opener != self.daemon_key or offer.state is not OfferState.OPEN:
            return []
        if len(frame.keys) > offer.seats:
            return []
        leaving = set(frame.keys)
        offer.members = [m for m in offer.members if not (m.key in leaving and m.daemon == sender)]
        return self._after_change(offer)

    def _on_manifest(self, sender: bytes, frame: frames.Manifest, host: str) -> list[FrameOut]:
        table_id, silence = frame.table_id, frame.silence
        offer = self.offers.get(table_id)
        if offer is None or sender != offer.opener or table_id != self.joined:
            return []  # we sign only the table our seats joined
        if offer.state not in (OfferState.OPEN, OfferState.WITHDRAWN):
            return []
        try:
            members = self._manifest_members(offer, frame.members)
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
        except ManifestRefused as why:
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
            out += self._on_sign(early_sender, early, "")
        return out

    def _manifest_members(self, offer: Offer, members: tuple[Member, ...]) -> list[Member]:
        """The members of a manifest for ``offer``, if it holds as a whole — one per seat (each
        well formed and no key twice: :func:`~tarotd.lobby.frames.decode` saw to it), every seat
        we host at our daemon and at least one of ours — or :class:`ManifestRefused` saying
        what does not, before anything is changed: a manifest taken in part would leave the
        table neither open nor able to start."""
        if len(members) != offer.seats:
            raise ManifestRefused(f"{len(members)} members for {offer.seats} seats")
        if any((m.key in self.hosted) != (m.daemon == self.daemon_key) for m in members):
            raise ManifestRefused(
                "it puts a seat of ours at another daemon, or a seat we do not host at ours"
            )
        if not any(m.key in self.hosted for m in members):
            raise ManifestRefused("none of our seats is in it")
        if any(m.key in self.hosted and m.bot != self.bot_levels.get(m.key, "") for m in members):
            raise ManifestRefused("it calls a person of ours a bot, or a bot of ours a person")
        return list(members)

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

    def _wait_for_manifest(self, sender: bytes, frame: frames.Sign) -> list[FrameOut]:
        """A signature may overtake the manifest (it comes from another daemon)."""
        waiting = self._early.setdefault(frame.table_id, [])
        if len(waiting) < MAX_EARLY:
            waiting.append((sender, frame))
        return []

    def _on_sign(self, sender: bytes, frame: frames.Sign, host: str) -> list[FrameOut]:
        table_id, key = frame.table_id, frame.key
        offer = self.offers.get(table_id)
        if offer is None:
            return []
        if offer.state in (OfferState.OPEN, OfferState.WITHDRAWN):
            return self._wait_for_manifest(sender, frame)
        if offer.state is not OfferState.FULL:
            return []
        member = next((m for m in offer.members if m.key == key and m.daemon == sender), None)
        if member is None or not verify(key, frame.sig, MANIFEST_DOMAIN + _manifest_of(offer)):
            return []
        self._signatures.setdefault(table_id, {}).setdefault(key, frame.sig)
        self._tosses[table_id].commit(key, frame.commit)
        return self._seal_if_signed(offer, self._tosses[table_id])

    def _toss_of(
        self, sender: bytes, frame: frames.Seals | frames.Coins
    ) -> tuple[Offer, CoinToss] | None:
        """The full table a ``seal`` or ``coin`` frame is for, and its coin, if ``sender`` is
        the daemon of one of its members.  Neither can overtake the manifest: a member seals
        only once it holds our commitment, sent once we had the manifest."""
        offer = self.offers.get(frame.table_id)
        toss = self._tosses.get(offer.table_id) if offer is not None else None
        if offer is None or toss is None or offer.state is not OfferState.FULL:
            return None
        return (offer, toss) if sender in toss.daemons.values() else None

    def _on_seal(self, sender: bytes, frame: frames.Seals, host: str) -> list[FrameOut]:
        found = self._toss_of(sender, frame)
        if found is None or len(frame.seals) > len(found[1].daemons):
            return []
        offer, toss = found
        for key, seal in frame.seals:
            toss.add_seal(key, sender, seal)
        return self._reveal_if_sealed(offer, toss)

    def _on_coin(self, sender: bytes, frame: frames.Coins, host: str) -> list[FrameOut]:
        """Coins revealed or relayed.  One before we revealed ours is no honest member's: an
        honest member sends its coins after every seal, which make our set whole."""
        found = self._toss_of(sender, frame)
        if found is None or len(frame.coins) > len(found[1].daemons):
            return []
        offer, toss = found
        if not toss.revealed:
            return []
        for reveal in frame.coins:
            toss.take(reveal, self._now)
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
        return frames.Join(offer.table_id, tuple(members)).to_wire()

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
        return [(offer.opener, frames.Knock(offer.table_id, run.sid, run.share).to_wire())]

    def _on_knock(self, sender: bytes, frame: frames.Knock, host: str) -> list[FrameOut]:
        """A joiner's share for a table we opened under a code: answered with ours, unless the
        key or host must wait or is locked out.  A key that knocks again while its run waits
        for its proof left that run unproved: counted as a wrong guess — knocks are not free."""
        table_id, sid = frame.table_id, frame.sid
        offer = self.offers.get(table_id)
        if (
            offer is None
            or offer.opener != self.daemon_key
            or offer.invite is None
            or offer.state is not OfferState.OPEN
        ):
            return []
        now = self._now or 0.0
        if self._runs.pop((sender, table_id), None) is not None:
            self._count_wrong(offer, sender, host, now)
        answer, locked = self.guesses.may_answer(sender, host, now)
        self._tell_lockouts(offer, locked, "knocks while told to wait")
        if answer is not Answer.ANSWER:
            return [(sender, frames.Refused(table_id, sid, WhyRefused(answer.value)).to_wire())]
        ci = channel(table_id, sender, self.daemon_key)
        try:
            run = Admitting.answer(offer.invite.secret, ci, sid, frame.share, self._secrets)
        except PakeError:
            return []
        while len(self._runs) >= MAX_RUNS:
            del self._runs[next(iter(self._runs))]  # the oldest: its joiner will knock again
        self._runs[(sender, table_id)] = run
        return [(sender, frames.Answer(table_id, sid, run.share).to_wire())]

    def _on_answer(self, sender: bytes, frame: frames.Answer, host: str) -> list[FrameOut]:
        """The opener's share: our proof of the code goes back (the joiner's tag comes first,
        so that the opener learns of every wrong guess)."""
        table_id = frame.table_id
        offer, knock = self.offers.get(table_id), self._knocks.get(table_id)
        if offer is None or knock is None or sender != offer.opener:
            return []
        run, _ = knock
        if frame.sid != run.sid:
            return []
        try:
            tag = run.answer(frame.share)
        except PakeError:
            del self._knocks[table_id]
            self._failed_knocks += 1
            offer.refused = "code"
            return self._pursue()
        return [(sender, frames.Prove(table_id, run.sid, tag).to_wire())]

    def _on_prove(self, sender: bytes, frame: frames.Prove, host: str) -> list[FrameOut]:
        """A joiner's proof of our code: a wrong one is a guess, counted; a right one seats its
        joins, and our own proof goes back."""
        table_id = frame.table_id
        run = self._runs.get((sender, table_id))
        offer = self.offers.get(table_id)
        if run is None or offer is None or frame.sid != run.sid:
            return []
        del self._runs[(sender, table_id)]
        tag = run.proved(frame.tag)
        if tag is None:
            self._count_wrong(offer, sender, host, self._now or 0.0)
            why = WhyRefused.LOCKED if self.guesses.is_locked(sender, host) else WhyRefused.CODE
            return [(sender, frames.Refused(table_id, run.sid, why).to_wire())]
        self.guesses.count_right(sender)
        offer.invited.add(sender)
        self._proved(sender)
        out: list[FrameOut] = [(sender, frames.Proven(table_id, run.sid, tag).to_wire())]
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

    def _on_proven(self, sender: bytes, frame: frames.Proven, host: str) -> list[FrameOut]:
        """The opener's proof: the offer is the table of our code — trusted from now on, and
        joined if we were asked to join it."""
        table_id = frame.table_id
        offer, knock = self.offers.get(table_id), self._knocks.get(table_id)
        if offer is None or knock is None or sender != offer.opener:
            return []
        run, invite = knock
        if frame.sid != run.sid or not run.confirms(frame.tag):
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

    def _on_refused(self, sender: bytes, frame: frames.Refused, host: str) -> list[FrameOut]:
        """The opener refused our knock: not its code, or we (or our host) must wait, or are
        locked out.  We knock again after a wait, never after the others."""
        table_id, why = frame.table_id, frame.why
        offer, knock = self.offers.get(table_id), self._knocks.get(table_id)
        if offer is None or knock is None or sender != offer.opener:
            return []
        if frame.sid != knock[0].sid:
            return []
        del self._knocks[table_id]
        if why is WhyRefused.WAIT:
            self._knock_after[table_id] = (self._now or 0.0) + KNOCK_AGAIN
            return self._pursue()
        self._failed_knocks += 1
        offer.refused = why.value
        if self._join_proved == table_id:
            self._join_proved = None
        log.warning(
            "lobby: table %s (%s): its opener %s refused our invite code: %s",
            offer.name,
            table_id.hex()[:8],
            fingerprint(sender),
            "we are locked out (too many wrong codes from this daemon or its host)"
            if why is WhyRefused.LOCKED
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
            (destination, offer.frame().to_wire()) for destination in self._audience(offer)
        ]
        if offer.full and offer.state is OfferState.OPEN and offer.opener == self.daemon_key:
            offer.state = OfferState.FULL
            slot = self.slots.get(offer.table_id)
            if slot is not None:  # the plan's seat order, not the order of the joins
                offer.members.sort(key=lambda m: slot.keys.index(m.key))
            manifest = frames.Manifest(offer.table_id, tuple(offer.members), offer.silence)
            out += self._to_members(offer, manifest)
            out += self._sign(offer)
        return out

    def _to_members(self, offer: Offer, frame: frames.LobbyFrame) -> list[FrameOut]:
        """``frame`` to the daemon of every member of ``offer`` but ours."""
        wire_frame = frame.to_wire()
        return [(daemon, wire_frame) for daemon in _daemons(offer) if daemon != self.daemon_key]

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
            out += self._to_members(offer, frames.Sign(offer.table_id, key, signature, commit))
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
        seals = tuple((key, self.hosted[key][0].sign(document)) for key in self._hosted_in(offer))
        for key, seal in seals:
            toss.add_seal(key, self.daemon_key, seal)
        frame = frames.Seals(offer.table_id, seals)
        return self._to_members(offer, frame) + self._reveal_if_sealed(offer, toss)

    def _reveal_if_sealed(self, offer: Offer, toss: CoinToss) -> list[FrameOut]:
        """Once every member's seal is in: every seal on to the others (one that reached us
        alone reaches them), then our coins; the rounds of reveals start now."""
        if not toss.sealed or toss.revealed:
            return []
        toss.reveal(self._now)
        coin, hosted = self._coins[offer.table_id], self._hosted_in(offer)
        ours = tuple(Reveal(key, coin) for key in hosted)
        for reveal in ours:
            toss.take(reveal, self._now)
        seals = frames.Seals(offer.table_id, tuple(toss.seals.items()))
        coins = frames.Coins(offer.table_id, ours)
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
                out.append((daemon, frames.Coins(table_id, tuple(coins)).to_wire()))
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


#: The handler of each kind of frame, h11's way: :meth:`Lobby.receive` decodes, then dispatches.
_HANDLERS: Final[Mapping[frames.Kind, Callable[[Lobby, bytes, Any, str], list[FrameOut]]]] = {
    frames.Kind.OFFER: Lobby._on_offer,
    frames.Kind.JOIN: Lobby._on_join,
    frames.Kind.LEAVE: Lobby._on_leave,
    frames.Kind.MANIFEST: Lobby._on_manifest,
    frames.Kind.SIGN: Lobby._on_sign,
    frames.Kind.SEAL: Lobby._on_seal,
    frames.Kind.COIN: Lobby._on_coin,
    frames.Kind.KNOCK: Lobby._on_knock,
    frames.Kind.ANSWER: Lobby._on_answer,
    frames.Kind.PROVE: Lobby._on_prove,
    frames.Kind.PROVEN: Lobby._on_proven,
    frames.Kind.REFUSED: Lobby._on_refused,
}
