"""The transcript of one deal: its signed messages in the one order every honest daemon holds.

**Hash chain.**  The head starts as ``SHA-256("tarot/v3/transcript" ‖ table_id ‖ deal (8 bytes,
big-endian) ‖ the members' public keys in seat order)`` and becomes ``SHA-256(head ‖ digest)``
after each message.  Every message names, in ``prev``, the head it builds on; so a signed
message commits its author to everything before it, and two daemons with the same head hold
the same deal.

**Who may speak.**  The transcript does not know the rules; the deal state machine does, and
tells it what comes next, every time the chain moves:

* :meth:`Transcript.expect` opens *sequential* slots: the next message is any **one** of them
  (say ``Slot(PLAY, 2)`` and ``Slot(POIGNEE, 2)``).  Open several slots at once only for one
  seat: that seat alone decides which comes first, whereas two seats racing for one head
  would leave daemons with different chains.
* :meth:`Transcript.expect_round` opens a *concurrent* round (commit, deal keys, chien keys,
  reveal, score signature): each listed seat sends one message, all built on the **same**
  head, the one before the round, in any order of arrival.  The round is appended only when
  complete, in seat order, so arrival order never shows in the chain.

:meth:`Transcript.append` returns the messages it added to the chain — one, none (a round
message held until the round is complete, or a network duplicate), or a whole round — and
the state machine applies exactly those, in that order, then opens the next slots.  Each
opening replaces the previous one; an unfinished round is dropped (after a timeout, say),
although its messages are kept as evidence and still count for their slots, so the deal must
go on with other slots (an abandon).

**Rejections** raise :class:`~protocol.replication.verdict.VerdictError` and change the chain in no
way. The transcript names a seat only when a message signed by that seat proves the fault by
itself: equivocation, two different signed messages for one slot (an honest daemon signs one
message per slot, and must store it before sending it so that a restart re-sends the same).
Everything else names nobody:

* bad signature, another table, another deal: anybody can send those — a replayed message
  from deal 6 was signed honestly in deal 6 and proves nothing against its author in deal 7;
* built on another head, or a slot not open now: messages also arrive early, and what is
  open depends on local timeouts (an abandon), so it is no proof either.  Such a message
  built on the current head is kept as evidence anyway: the state machine, which knows the
  rules, may cite it in its own verdict.  A daemon should keep unattributed rejects aside
  and offer them again whenever the chain moves or new slots open.

**Files.**  :meth:`Transcript.to_bytes` writes the deal so anyone can check it offline:
the msgpack array ``[magic, table_id, deal, [[key, name], ...], [chain messages],
[evidence]]`` where the evidence holds the validly signed messages kept outside the chain
(the second message of an equivocation, one not expected when it came, an unfinished round),
followed, only when there are any, by ``[forgeries]``: messages a member signed for another
member's seat, which prove an impersonation by their signer.
:meth:`Transcript.from_bytes` re-checks every signature and the whole chain.  The names are
labels for humans and are not signed: the keys are the identities (a proof file carries the
table's manifest, which every member signed, names included).
:func:`proof_file` wraps a verdict and the whole transcript that proves it, which
``tarot audit`` replays.

**After a proven deviation** (equivocation, impersonation…) the seats that hold the proof
:meth:`~Transcript.rewind` to the head the offending message named: honest seats may have
accepted different messages after it, and must end the deal on one common chain.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import msgpack

from protocol.replication.identity import fingerprint, is_valid_public_key
from protocol.replication.manifest import SignedManifest
from protocol.replication.messages import (
    MAX_DEAL,
    TABLE_ID_SIZE,
    Kind,
    Message,
    MessageError,
    decode,
    encode,
    verify_signature,
)
from protocol.replication.verdict import Verdict, VerdictError
from protocol.rules.variants import VARIANTS
from protocol.wire import array, binary, integer, refused_as, text, unpack

GENESIS_DOMAIN = b"tarot/v3/transcript"
FILE_MAGIC = b"tarot/v3/transcript-file"
PROOF_FILE_MAGIC = b"tarot/v3/proof-file"
#: What every magic of this protocol version starts with; an older one is refused by name.
VERSION_PREFIX = b"tarot/v3/"
#: Why a file of an older version cannot be audited here, by version.
OLDER_VERSIONS = {
    "v1": "its lock step let other seats read hands, and its messages have other shapes",
    "v2": "its deck is in Ed25519's prime-order subgroup, whose points are of another group "
    "than tarot/v3's ristretto255, so no step of it can be replayed or its proofs checked here",
}

#: A transcript or proof file's bytes: a deal's messages are a few megabytes at most; a file
#: read for an audit may come from anyone.
MAX_FILE_BYTES = 64 * 1024 * 1024

EQUIVOCATION = "equivocation: two different signed messages for one slot"
IMPERSONATION = "impersonation: signed a message claiming seat"


class TranscriptError(ValueError):
    """A transcript file or proof bundle that does not verify; the text says where and why."""


class OtherVersionError(TranscriptError):
    """A transcript or proof file of another protocol version: read, but refused by name."""


@dataclass(frozen=True)
class Slot:
    """One message the state machine allows next: ``kind`` from ``seat``."""

    kind: Kind
    seat: int


def genesis(table_id: bytes, deal: int, members: Sequence[bytes]) -> bytes:
    """The head of an empty transcript.  It binds the chain to one table, one deal and one
    set of players, so no message can be carried over into another deal or table."""
    material = GENESIS_DOMAIN + table_id + deal.to_bytes(8, "big") + b"".join(members)
    return hashlib.sha256(material).digest()


def next_head(head: bytes, message: Message) -> bytes:
    return hashlib.sha256(head + message.digest).digest()


class Transcript:
    """The messages of deal ``deal`` at table ``table_id``, whose seats hold ``members``."""

    def __init__(
        self,
        table_id: bytes,
        deal: int,
        members: Sequence[bytes],
        names: Sequence[str] | None = None,
    ) -> None:
        """``names`` label the seats for humans; they default to the keys' fingerprints."""
        if len(table_id) != TABLE_ID_SIZE:
            raise ValueError(f"a table id is {TABLE_ID_SIZE} bytes, not {len(table_id)}")
        if not 0 <= deal <= MAX_DEAL:
            raise ValueError(f"deal number {deal} is out of range 0..{MAX_DEAL}")
        if len(members) not in VARIANTS:
            raise ValueError(f"a table has 3, 4 or 5 members, not {len(members)}")
        for seat, key in enumerate(members):
            if not is_valid_public_key(key):
                raise ValueError(f"seat {seat}: not a valid Ed25519 public key")
        if len(set(members)) != len(members):
            raise ValueError("two seats share one key, so one player could sign for both")
        if names is None:
            names = [fingerprint(key) for key in members]
        if len(names) != len(members):
            raise ValueError(f"{len(names)} names for {len(members)} members")
        self.table_id = table_id
        self.deal = deal
        self.members = tuple(members)
        self.names = tuple(names)
        self._head = genesis(table_id, deal, members)
        self._heads = {self._head}  # every head so far: tells a stale message from an early one
        self._chain: list[Message] = []
        self._kept: dict[bytes, Message] = {}  # digest -> every authentic message held
        self._spoken: dict[tuple[bytes, Kind, int], Message] = {}  # (prev, kind, seat) -> first
        self._open: frozenset[Slot] = frozenset()
        self._concurrent = False
        self._round: dict[int, Message] = {}  # seat -> message of the round being collected
        self._forged: dict[bytes, Message] = {}  # digest -> a member's message for another seat

    @property
    def head(self) -> bytes:
        """The hash the next message must name as ``prev``."""
        return self._head

    @property
    def messages(self) -> tuple[Message, ...]:
        """The chain, in order."""
        return tuple(self._chain)

    # --- What comes next -------------------------------------------------------------

    def expect(self, *slots: Slot) -> None:
        """Open sequential slots: the next message is any one of them.  ``expect()`` with
        nothing closes the transcript (the deal is over)."""
        self._reopen(frozenset(slots), concurrent=False)

    def expect_round(self, kind: Kind, seats: Iterable[int]) -> None:
        """Open a concurrent round: one ``kind`` message from each of ``seats``, all built
        on the current head.  Opening the round that is already being collected keeps what
        it has collected, so a state machine may re-state what is open after every event."""
        slots = frozenset(Slot(kind, seat) for seat in seats)
        if not slots:
            raise ValueError("a concurrent round needs at least one seat")
        if not (self._concurrent and slots == self._open):
            self._reopen(slots, concurrent=True)

    @property
    def awaiting(self) -> tuple[Slot, ...]:
        """The open slots still unfilled, by seat: whom the deal is waiting for."""
        waiting = [slot for slot in self._open if slot.seat not in self._round]
        return tuple(sorted(waiting, key=lambda slot: (slot.seat, slot.kind.value)))

    def _reopen(self, slots: frozenset[Slot], *, concurrent: bool) -> None:
        for slot in slots:
            if not 0 <= slot.seat < len(self.members):
                raise ValueError(f"no seat {slot.seat} at a table of {len(self.members)}")
        if concurrent and len({slot.kind for slot in slots}) != 1:
            raise ValueError("a concurrent round has one kind of message")
        self._open, self._concurrent, self._round = slots, concurrent, {}

    # --- Receiving -----------------------------------------------------------------------

    def append(self, message: Message) -> list[Message]:
        """Check ``message`` and add it; returns the messages added to the chain, in order.

        Raises :class:`VerdictError` if it is rejected; the chain is then unchanged, but a
        validly signed message on the current head is kept as evidence (module docstring).
        """
        slot_key = (message.prev, message.kind, message.seat)
        earlier = self._spoken.get(slot_key)
        if earlier is not None and earlier.digest == message.digest:
            return []  # the network (or a relaying peer) delivered it twice: checked already
        self._authenticate(message)
        if earlier is not None:
            if earlier.signed_data == message.signed_data:
                return []  # the same body under another valid signature encoding
            self._kept.setdefault(message.digest, message)
            raise VerdictError(
                Verdict(
                    message.seat,
                    message.kind.value,
                    EQUIVOCATION,
                    (earlier.digest.hex(), message.digest.hex()),
                )
            )
        if message.prev != self._head:
            reason = (
                "stale: built on an earlier head of this deal"
                if message.prev in self._heads
                else "out of order: built on a head this transcript has not reached"
            )
            raise _rejection(message, reason)
        if Slot(message.kind, message.seat) not in self._open:
            self._kept.setdefault(message.digest, message)
            raise _rejection(
                message, f"not expected now: {message.kind.value} from seat {message.seat}"
            )
        self._spoken[slot_key] = message
        self._kept[message.digest] = message
        if not self._concurrent:
            self._open = frozenset()
            return self._extend([message])
        self._round[message.seat] = message
        if len(self._round) < len(self._open):
            return []
        complete = [self._round[seat] for seat in sorted(self._round)]
        self._open, self._round = frozenset(), {}
        return self._extend(complete)

    def _authenticate(self, message: Message) -> None:
        """Reject, naming nobody, what is not a message of one of this table's members for
        this very deal: without that, nothing about the message can be held against anyone."""
        if message.seat >= len(self.members):
            raise _rejection(message, f"no seat {message.seat} at a table of {len(self.members)}")
        if not verify_signature(message, self.members[message.seat]):
            raise _rejection(message, "bad signature")
        if message.table_id != self.table_id:
            raise _rejection(message, "message for another table")
        if message.deal < self.deal:
            raise _rejection(message, f"replayed message from deal {message.deal}")
        if message.deal > self.deal:
            raise _rejection(message, f"message for deal {message.deal}, this is deal {self.deal}")

    def accepted(self, message: Message) -> bool:
        """Has this very message been accepted for its slot (in the chain or its round)?"""
        earlier = self._spoken.get((message.prev, message.kind, message.seat))
        return earlier is not None and earlier.digest == message.digest

    def holds(self, message: Message) -> bool:
        """Is this very message held here: in the chain, as evidence or as a forgery?"""
        return message.digest in self._kept or message.digest in self._forged

    def reached(self, head: bytes) -> bool:
        """Is ``head`` the head of this chain now or at an earlier point?"""
        return head in self._heads

    def head_before(self, index: int) -> bytes:
        """The head the chain had before its message ``index``."""
        head = genesis(self.table_id, self.deal, self.members)
        for message in self._chain[:index]:
            head = next_head(head, message)
        return head

    def rewind(self, head: bytes) -> list[Message]:
        """Cut the chain back to the point where ``head`` was its head; returns the messages
        taken off (kept as evidence).  After a proven deviation every honest seat rewinds to
        the head the offending message named, so they all go on from one common chain
        whatever each had accepted after it.  ValueError for a head never reached."""
        if head not in self._heads:
            raise ValueError("cannot rewind to a head this transcript never reached")
        heads = [genesis(self.table_id, self.deal, self.members)]
        for message in self._chain:
            heads.append(next_head(heads[-1], message))
        keep = heads.index(head)
        dropped, self._chain = self._chain[keep:], self._chain[:keep]
        self._head, self._heads = head, set(heads[: keep + 1])
        for message in dropped:  # no longer accepted for their slots: they may be taken again
            slot_key = (message.prev, message.kind, message.seat)
            if (
                spoken := self._spoken.get(slot_key)
            ) is not None and spoken.digest == message.digest:
                del self._spoken[slot_key]
        self._open, self._concurrent, self._round = frozenset(), False, {}
        return dropped

    def close_round(self) -> list[Message]:
        """End the concurrent round being collected with the seats that have sent theirs
        (the others timed out): they go into the chain, in seat order, and are returned.
        Used for the reveal and the score signatures, whose senders' work must count."""
        if not self._concurrent or not self._round:
            return []
        complete = [self._round[seat] for seat in sorted(self._round)]
        self._open, self._round = frozenset(), {}
        return self._extend(complete)

    def keep(self, message: Message) -> None:
        """Keep, for the file, a message of this deal that proves a deviation whenever it came
        (a state machine decides that): as evidence if its seat signed it, as a forgery if
        another member did.  A message nobody at the table signed is not kept."""
        signer = signer_of(message, self.members)
        if signer is None or (message.table_id, message.deal) != (self.table_id, self.deal):
            return
        if signer == message.seat:
            self._kept.setdefault(message.digest, message)
        else:
            self._forged.setdefault(message.digest, message)

    @property
    def evidence(self) -> tuple[Message, ...]:
        """Every signed message held outside the chain: evidence and forgeries."""
        in_chain = {message.digest for message in self._chain}
        kept = [m for digest, m in self._kept.items() if digest not in in_chain]
        return (*kept, *self._forged.values())

    def _extend(self, messages: list[Message]) -> list[Message]:
        for message in messages:
            self._chain.append(message)
            self._head = next_head(self._head, message)
            self._heads.add(self._head)
        return messages

    # --- Files -----------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """The whole deal as a file: see the module docstring for the format."""
        in_chain = {message.digest for message in self._chain}
        evidence = [encode(m) for digest, m in self._kept.items() if digest not in in_chain]
        fields = [
            FILE_MAGIC,
            self.table_id,
            self.deal,
            _pack_members(self.members, self.names),
            [encode(message) for message in self._chain],
            evidence,
        ]
        if self._forged:
            fields.append([encode(message) for message in self._forged.values()])
        return _pack(fields)

    @classmethod
    def from_bytes(cls, data: bytes) -> Transcript:
        """Read and verify a file written by :meth:`to_bytes`: every message's encoding and
        signature, its table and deal, and the hash chain from the genesis to the end.
        Raises :class:`TranscriptError` on any corruption.  The result is for reading (the
        audit replays its :attr:`messages`): nothing is open in it."""
        transcript, chain, evidence, forged = _read_file(
            data, FILE_MAGIC, "transcript file", optional=1
        )
        for index, message in enumerate(_decode_all(chain, "message")):
            transcript._replay(index, message)
        for index, message in enumerate(_decode_all(evidence, "evidence message")):
            _check_file_message(transcript, message, f"evidence message {index}")
            transcript._kept.setdefault(message.digest, message)
        for index, message in enumerate(_decode_all(forged[0] if forged else [], "forged message")):
            _check_forgery(transcript, message, f"forged message {index}")
            transcript._forged.setdefault(message.digest, message)
        if transcript.to_bytes() != data:
            raise TranscriptError(
                "transcript file is not in canonical form (altered or duplicated data)"
            )
        return transcript

    def _replay(self, index: int, message: Message) -> None:
        """Add the ``index``-th message of a file to the chain, checking that it builds on the
        messages before it.  A concurrent round shows as consecutive messages of one kind
        sharing ``prev``, in increasing seat order; anything else must build on the head."""
        _check_file_message(self, message, f"message {index}")
        last = self._chain[-1] if self._chain else None
        same_round = (
            last is not None
            and message.prev == last.prev
            and message.kind == last.kind
            and message.seat > last.seat
        )
        if message.prev != self._head and not same_round:
            raise TranscriptError(
                f"message {index} ({message.kind.value} from seat {message.seat}) "
                "does not build on the messages before it: the chain is broken"
            )
        self._spoken[(message.prev, message.kind, message.seat)] = message
        self._kept[message.digest] = message
        self._extend([message])


def proof_file(transcript: Transcript, verdict: Verdict, manifest: SignedManifest) -> bytes:
    """What an honest seat writes when it names a cheater: ``[magic, [seat, step, reason,
    [evidence]], transcript file, [manifest, [signatures]]]``.  The whole transcript, not only
    the cited messages, because most verdicts (a bad shuffle, a seat that stopped answering, a
    renonce) hold only against the chain before them and the seeds revealed after; ``tarot
    audit`` replays it and checks that it gives this very verdict.  And the table's manifest
    with every member's signature (:mod:`protocol.replication.manifest`): the transcript's names are
    labels nobody signed, the manifest's are signed by every member, so the audit takes the
    names — and the table's rules — from it, and a transcript naming a seat otherwise (the
    accused renamed) does not hold."""
    return _pack(
        [
            PROOF_FILE_MAGIC,
            [verdict.seat, verdict.step, verdict.reason, list(verdict.evidence)],
            transcript.to_bytes(),
            [manifest.document, list(manifest.signatures)],
        ]
    )


def read_proof_file(data: bytes) -> tuple[Verdict, Transcript, SignedManifest]:
    """The verdict a proof file states, its transcript, verified as :meth:`Transcript.from_bytes`
    does, and the manifest it carries (its signatures not checked yet).  Raises
    :class:`TranscriptError` if it is not a well-formed proof file; whether the manifest is
    signed and names the transcript's members, and whether the transcript proves the
    verdict, is for the audit to say."""
    fields = _unpack_file(data, "proof file")
    _refuse_other_version(fields, "proof file")
    if type(fields) is not list or len(fields) not in (3, 4) or fields[0] != PROOF_FILE_MAGIC:
        raise TranscriptError(f"not a proof file (expected a {PROOF_FILE_MAGIC.decode()} header)")
    if len(fields) == 3:
        raise TranscriptError(
            "proof file without the table's signed manifest (written by an older release): "
            "nothing in it signs the players' names"
        )
    _, stated, inner, signed = fields
    if type(inner) is not bytes or type(stated) is not list or len(stated) != 4:
        raise TranscriptError("proof file: malformed verdict or transcript")
    if (
        type(signed) is not list
        or len(signed) != 2
        or type(signed[0]) is not bytes
        or type(signed[1]) is not list
    ):
        raise TranscriptError("proof file: the manifest is not [manifest, [signatures]]")
    if not all(type(signature) is bytes for signature in signed[1]):
        raise TranscriptError("proof file: a manifest signature is not bytes")
    manifest = SignedManifest(signed[0], tuple(signed[1]))
    transcript = Transcript.from_bytes(inner)
    seat, step, reason, evidence = stated
    if seat is not None and not (type(seat) is int and 0 <= seat < len(transcript.members)):
        raise TranscriptError("proof file: the verdict names no seat of the table")
    if type(step) is not str or type(reason) is not str or type(evidence) is not list:
        raise TranscriptError("proof file: malformed verdict")
    if not all(type(item) is str for item in evidence):
        raise TranscriptError("proof file: malformed evidence")
    verdict = Verdict(seat, step, reason, tuple(evidence))
    if proof_file(transcript, verdict, manifest) != data:
        raise TranscriptError("proof file is not in canonical form (altered data)")
    return verdict, transcript, manifest


def is_proof_file(data: bytes) -> bool:
    """Does ``data`` start like a proof file (rather than a transcript file)?  A proof file of
    another protocol version too, so that it is refused as the proof file it is."""
    return b"/proof-file" in data[:32]


def _pack(value: object) -> bytes:
    data: bytes = msgpack.packb(value, use_bin_type=True)
    return data


def _pack_members(members: Sequence[bytes], names: Sequence[str]) -> list[list[bytes | str]]:
    return [[key, name] for key, name in zip(members, names)]


def _read_file(
    data: bytes, magic: bytes, what: str, optional: int = 0
) -> tuple[Transcript, object, object, list[object]]:
    """Parse the header of a transcript file.  Returns an empty
    transcript carrying the header, which checks the keys, with the remaining fields (two,
    and up to ``optional`` more)."""
    fields = _unpack_file(data, what)
    _refuse_other_version(fields, what)
    if type(fields) is not list or not 6 <= len(fields) <= 6 + optional or fields[0] != magic:
        raise TranscriptError(f"not a {what} (expected a {magic.decode()} header)")
    _, table_id, deal, members, first, second, *more = fields
    with refused_as(lambda reason: TranscriptError(f"{what}: malformed header: {reason}")):
        binary("the table id", table_id, MAX_FILE_BYTES)
        integer("the deal", deal, 0, MAX_DEAL)
        array("the members", members)
    member_refused = f"{what}: a member is not [key, name]"
    with refused_as(lambda reason: TranscriptError(f"{member_refused}: {reason}")):
        for index, member in enumerate(members):
            array(f"member {index}", member, length=2)
            binary(f"member {index}'s key", member[0], MAX_FILE_BYTES)
            text(f"member {index}'s name", member[1], MAX_FILE_BYTES)
    try:
        header = Transcript(
            table_id, deal, [key for key, _ in members], [name for _, name in members]
        )
    except ValueError as exc:
        raise TranscriptError(f"{what}: {exc}") from None
    return header, first, second, more


def _refuse_other_version(fields: object, what: str) -> None:
    """A file of another protocol version is never read as if it were of this one: its deck
    is in another group (``tarot/v2``: Ed25519; ``tarot/v1``: a lock step that published
    readable points) — audited here it would give a verdict that means nothing."""
    magic = fields[0] if type(fields) is list and fields else None
    if (
        type(magic) is not bytes
        or not magic.startswith(b"tarot/v")
        or magic.startswith(VERSION_PREFIX)
    ):
        return
    version = magic.split(b"/")[1].decode("ascii", "replace")
    this = VERSION_PREFIX.split(b"/")[1].decode()
    why = OLDER_VERSIONS.get(version, "it is of a protocol this program does not know")
    raise OtherVersionError(
        f"this {what} was recorded by tarot/{version}; this program audits tarot/{this} "
        f"files only ({why}): audit it with a build of tarot/{version}, the release that wrote it"
    )


def _unpack_file(data: bytes, what: str) -> object:
    with refused_as(TranscriptError):
        return unpack(data, max_size=MAX_FILE_BYTES, what=what)


def _decode_all(raw: object, what: str) -> list[Message]:
    messages: list[Message] = []
    with refused_as(TranscriptError):
        for index, wire in enumerate(array(f"the {what} list", raw)):
            frame = binary(f"{what} {index}", wire, MAX_FILE_BYTES)
            try:
                messages.append(decode(frame))
            except MessageError as exc:
                raise TranscriptError(f"{what} {index}: {exc}") from None
    return messages


def _check_file_message(transcript: Transcript, message: Message, where: str) -> None:
    try:
        transcript._authenticate(message)
    except VerdictError as exc:
        raise TranscriptError(
            f"{where} ({message.kind.value} from seat {message.seat}): {exc.verdict.reason}"
        ) from None


def equivocations(messages: Iterable[Message]) -> list[Verdict]:
    """Every equivocation among ``messages`` (each already authenticated for its seat), the
    evidence sorted: the same verdict whichever copy of the pair a seat had first."""
    first: dict[tuple[bytes, Kind, int], Message] = {}
    found: list[Verdict] = []
    for message in messages:
        key = (message.prev, message.kind, message.seat)
        earlier = first.setdefault(key, message)
        if earlier.signed_data != message.signed_data:
            digests = sorted((earlier.digest.hex(), message.digest.hex()))
            found.append(Verdict(message.seat, message.kind.value, EQUIVOCATION, tuple(digests)))
    return found


def signer_of(message: Message, members: Sequence[bytes]) -> int | None:
    """The seat whose key signed ``message`` (normally its own seat), or None."""
    if message.seat < len(members) and verify_signature(message, members[message.seat]):
        return message.seat
    return next((seat for seat, key in enumerate(members) if verify_signature(message, key)), None)


def impersonation(message: Message, signer: int) -> Verdict:
    """A message for another seat signed with ``signer``'s key: it proves, by itself, that
    ``signer`` tried to speak for that seat (an honest daemon signs only for its own)."""
    reason = f"{IMPERSONATION} {message.seat}"
    return Verdict(signer, message.kind.value, reason, (message.digest.hex(),))


def _check_forgery(transcript: Transcript, message: Message, where: str) -> None:
    """A forged message of a file: of this table and deal, signed by a member other than
    the seat it claims."""
    what = f"{where} ({message.kind.value} claiming seat {message.seat})"
    if (message.table_id, message.deal) != (transcript.table_id, transcript.deal):
        raise TranscriptError(f"{what}: not of this table and deal")
    if signer_of(message, transcript.members) in (None, message.seat):
        raise TranscriptError(f"{what}: not signed by another member of the table")


def _rejection(message: Message, reason: str) -> VerdictError:
    """A rejection that names nobody (see the module docstring for why)."""
    return VerdictError(Verdict(None, message.kind.value, reason, (message.digest.hex(),)))
