"""The hash-chained transcript of a deal: who may append what, concurrent rounds in seat
order, equivocation proofs, and files anyone can verify offline."""

from __future__ import annotations

import hashlib
import re

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.replication.identity import Identity, fingerprint
from protocol.replication.messages import Kind, Message, WireValue, encode, sign_message
from protocol.replication.transcript import (
    EQUIVOCATION,
    Slot,
    Transcript,
    TranscriptError,
    genesis,
)
from protocol.replication.verdict import Verdict, VerdictError

PLAYERS = [Identity.from_private_bytes(bytes([seat + 1]) * 32) for seat in range(5)]
KEYS = [player.public_key for player in PLAYERS]
NAMES = ["Anne", "Basile", "Chloé", "Denis", "Élise"]
TABLE = bytes.fromhex("5461726f74207461626c652021212121")
OTHER_TABLE = bytes(16)
DEAL = 7


def new_transcript(players: int = 5) -> Transcript:
    return Transcript(TABLE, DEAL, KEYS[:players], NAMES[:players])


def signed(
    transcript: Transcript,
    seat: int,
    kind: Kind,
    payload: WireValue = None,
    *,
    prev: bytes | None = None,
    deal: int = DEAL,
    table: bytes = TABLE,
    signer: Identity | None = None,
) -> Message:
    """A message from ``seat`` (signed by its own key unless ``signer`` says otherwise),
    built on the transcript's current head unless ``prev`` says otherwise."""
    return sign_message(
        signer or PLAYERS[seat],
        table,
        deal,
        kind,
        seat,
        {"n": 0} if payload is None else payload,
        transcript.head if prev is None else prev,
    )


def round_of(transcript: Transcript, kind: Kind, seats: range) -> list[Message]:
    return [signed(transcript, seat, kind, {"from": seat}) for seat in seats]


def small_deal(players: int = 5) -> Transcript:
    """The shape of a real deal: concurrent commit round, shuffle and lock in seat order,
    concurrent deal-key round, a bid, a play."""
    transcript = new_transcript(players)
    seats = range(players)
    for kind in (Kind.COMMIT,):
        transcript.expect_round(kind, seats)
        for message in round_of(transcript, kind, seats):
            transcript.append(message)
    for kind in (Kind.SHUFFLE, Kind.LOCK):
        for seat in seats:
            transcript.expect(Slot(kind, seat))
            transcript.append(signed(transcript, seat, kind, {"deck": [bytes([seat]) * 32] * 3}))
    transcript.expect_round(Kind.DEAL_KEYS, seats)
    for message in reversed(round_of(transcript, Kind.DEAL_KEYS, seats)):
        transcript.append(message)
    transcript.expect(Slot(Kind.BID, 1))
    transcript.append(signed(transcript, 1, Kind.BID, {"contract": "garde"}))
    transcript.expect(Slot(Kind.PLAY, 1), Slot(Kind.POIGNEE, 1))
    transcript.append(signed(transcript, 1, Kind.PLAY, {"position": 12, "key": bytes(32)}))
    return transcript


def rejection(transcript: Transcript, message: Message) -> Verdict:
    """Append a message that must be rejected; check that the chain did not change."""
    before = transcript.messages, transcript.head
    with pytest.raises(VerdictError) as caught:
        transcript.append(message)
    assert (transcript.messages, transcript.head) == before
    return caught.value.verdict


# --- The chain ---------------------------------------------------------------------


def test_genesis_binds_table_deal_and_members() -> None:
    expected = hashlib.sha256(
        b"tarot/v3/transcript" + TABLE + DEAL.to_bytes(8, "big") + b"".join(KEYS)
    )
    assert new_transcript().head == expected.digest()
    assert genesis(TABLE, DEAL + 1, KEYS) != genesis(TABLE, DEAL, KEYS)
    assert genesis(OTHER_TABLE, DEAL, KEYS) != genesis(TABLE, DEAL, KEYS)
    assert genesis(TABLE, DEAL, KEYS[::-1]) != genesis(TABLE, DEAL, KEYS)


def test_sequential_message_extends_the_chain() -> None:
    transcript = new_transcript()
    start = transcript.head
    transcript.expect(Slot(Kind.SHUFFLE, 0))
    message = signed(transcript, 0, Kind.SHUFFLE)
    assert transcript.append(message) == [message]
    assert transcript.messages == (message,)
    assert transcript.head == hashlib.sha256(start + message.digest).digest()
    assert transcript.awaiting == ()


def test_one_of_several_open_slots_closes_them_all() -> None:
    transcript = new_transcript()
    transcript.expect(Slot(Kind.PLAY, 2), Slot(Kind.POIGNEE, 2))
    assert transcript.awaiting == (Slot(Kind.PLAY, 2), Slot(Kind.POIGNEE, 2))
    transcript.append(signed(transcript, 2, Kind.POIGNEE))
    assert not transcript.awaiting
    verdict = rejection(transcript, signed(transcript, 2, Kind.PLAY))
    assert verdict.reason == "not expected now: play from seat 2"


# --- Rejections --------------------------------------------------------------------


def test_bad_signature_blames_nobody() -> None:
    """A forged signature proves nothing about the seat it claims to come from."""
    transcript = new_transcript()
    transcript.expect(Slot(Kind.SHUFFLE, 0))
    forged = signed(transcript, 0, Kind.SHUFFLE, signer=PLAYERS[3])  # seat 3 signs as seat 0
    verdict = rejection(transcript, forged)
    assert verdict == Verdict(None, "shuffle", "bad signature", (forged.digest.hex(),))
    assert not verdict.attributed


def test_signature_of_an_outsider_is_bad() -> None:
    transcript = new_transcript()
    transcript.expect(Slot(Kind.SHUFFLE, 0))
    verdict = rejection(transcript, signed(transcript, 0, Kind.SHUFFLE, signer=Identity.generate()))
    assert verdict.reason == "bad signature" and verdict.seat is None


def test_seat_beyond_the_table() -> None:
    transcript = new_transcript(players=4)
    verdict = rejection(transcript, signed(transcript, 4, Kind.COMMIT))
    assert verdict.reason == "no seat 4 at a table of 4" and verdict.seat is None


def test_message_for_another_table() -> None:
    transcript = new_transcript()
    transcript.expect(Slot(Kind.SHUFFLE, 0))
    verdict = rejection(transcript, signed(transcript, 0, Kind.SHUFFLE, table=OTHER_TABLE))
    assert verdict.reason == "message for another table" and verdict.seat is None


def test_replay_from_an_earlier_deal_is_rejected_but_blames_nobody() -> None:
    """The author signed it honestly in deal 6; anybody who saw it can send it again."""
    previous = Transcript(TABLE, DEAL - 1, KEYS, NAMES)
    previous.expect(Slot(Kind.SHUFFLE, 0))
    old = signed(previous, 0, Kind.SHUFFLE, deal=DEAL - 1)
    previous.append(old)
    transcript = new_transcript()
    transcript.expect(Slot(Kind.SHUFFLE, 0))
    verdict = rejection(transcript, old)
    assert verdict == Verdict(
        None, "shuffle", f"replayed message from deal {DEAL - 1}", (old.digest.hex(),)
    )
    # Even relabelled with the current head, the old deal number is in the signed body.
    verdict = rejection(transcript, signed(transcript, 0, Kind.SHUFFLE, deal=DEAL - 1))
    assert verdict.reason == f"replayed message from deal {DEAL - 1}"


def test_message_for_a_later_deal() -> None:
    transcript = new_transcript()
    verdict = rejection(transcript, signed(transcript, 0, Kind.COMMIT, deal=DEAL + 1))
    assert verdict.reason == f"message for deal {DEAL + 1}, this is deal {DEAL}"


def test_early_message_on_an_unknown_head() -> None:
    transcript = new_transcript()
    transcript.expect(Slot(Kind.SHUFFLE, 0))
    first = signed(transcript, 0, Kind.SHUFFLE)
    ahead = hashlib.sha256(transcript.head + first.digest).digest()
    early = signed(transcript, 1, Kind.SHUFFLE, prev=ahead)
    verdict = rejection(transcript, early)
    assert verdict.reason.startswith("out of order") and verdict.seat is None
    # Offered again once the chain has caught up, it is accepted.
    transcript.append(first)
    transcript.expect(Slot(Kind.SHUFFLE, 1))
    assert transcript.append(early) == [early]


def test_stale_message_on_an_earlier_head() -> None:
    transcript = new_transcript()
    old_head = transcript.head
    transcript.expect(Slot(Kind.SHUFFLE, 0))
    transcript.append(signed(transcript, 0, Kind.SHUFFLE))
    transcript.expect(Slot(Kind.SHUFFLE, 1))
    verdict = rejection(transcript, signed(transcript, 1, Kind.SHUFFLE, prev=old_head))
    assert verdict.reason.startswith("stale") and verdict.seat is None


def test_message_not_expected_is_rejected_and_kept_as_evidence() -> None:
    transcript = new_transcript()
    transcript.expect(Slot(Kind.SHUFFLE, 0))
    wrong_seat = signed(transcript, 1, Kind.SHUFFLE)
    wrong_kind = signed(transcript, 0, Kind.LOCK)
    for message in (wrong_seat, wrong_kind):
        verdict = rejection(transcript, message)
        assert verdict.reason.startswith("not expected now") and verdict.seat is None
    assert transcript.messages == ()
    assert transcript.evidence == (wrong_seat, wrong_kind)
    reloaded = Transcript.from_bytes(transcript.to_bytes())
    assert reloaded.messages == () and reloaded.evidence == (wrong_seat, wrong_kind)


def test_nothing_is_open_after_the_last_slot() -> None:
    transcript = new_transcript()
    transcript.expect(Slot(Kind.SHUFFLE, 0))
    transcript.append(signed(transcript, 0, Kind.SHUFFLE))
    verdict = rejection(transcript, signed(transcript, 1, Kind.SHUFFLE))
    assert verdict.reason == "not expected now: shuffle from seat 1"


# --- Equivocation and duplicates ---------------------------------------------------


def test_equivocation_is_caught_with_both_digests_and_proven_offline() -> None:
    transcript = new_transcript()
    transcript.expect(Slot(Kind.BID, 3))
    first = signed(transcript, 3, Kind.BID, {"contract": "petite"})
    second = signed(transcript, 3, Kind.BID, {"contract": "garde"})
    transcript.append(first)
    verdict = rejection(transcript, second)
    assert verdict == Verdict(3, "bid", EQUIVOCATION, (first.digest.hex(), second.digest.hex()))
    assert transcript.messages == (first,)

    assert transcript.evidence == (second,) and transcript.holds(first)
    assert (first.prev, first.kind, first.seat, first.deal) == (
        second.prev,
        second.kind,
        second.seat,
        second.deal,
    )
    assert first.signed_data != second.signed_data

    # The pair survives in the saved transcript, so the proof can be made again later.
    reloaded = Transcript.from_bytes(transcript.to_bytes())
    assert reloaded.messages == (first,) and reloaded.evidence == (second,)


def test_equivocation_inside_a_concurrent_round() -> None:
    transcript = new_transcript()
    transcript.expect_round(Kind.DEAL_KEYS, range(5))
    first = signed(transcript, 2, Kind.DEAL_KEYS, {"keys": [b"a"]})
    second = signed(transcript, 2, Kind.DEAL_KEYS, {"keys": [b"b"]})
    assert transcript.append(first) == []
    verdict = rejection(transcript, second)
    assert verdict.seat == 2 and verdict.evidence == (first.digest.hex(), second.digest.hex())


def test_duplicates_are_ignored() -> None:
    transcript = new_transcript()
    transcript.expect_round(Kind.COMMIT, range(5))
    messages = round_of(transcript, Kind.COMMIT, range(5))
    assert transcript.append(messages[0]) == []
    assert transcript.append(messages[0]) == []  # while the round is being collected
    for message in messages[1:]:
        transcript.append(message)
    assert transcript.messages == tuple(messages)
    head = transcript.head
    assert transcript.append(messages[3]) == []  # after the round is in the chain
    assert transcript.head == head and len(transcript.messages) == 5


# --- Concurrent rounds ---------------------------------------------------------------


@given(st.permutations(range(5)))
@settings(max_examples=120, deadline=None)
def test_concurrent_round_order_does_not_depend_on_arrival(arrival: list[int]) -> None:
    reference = new_transcript()
    transcript = new_transcript()
    before = transcript.head
    messages = round_of(transcript, Kind.REVEAL, range(5))
    for t in (reference, transcript):
        t.expect_round(Kind.REVEAL, range(5))
    for message in messages:
        reference.append(message)
    added: list[Message] = []
    for count, seat in enumerate(arrival, start=1):
        added += transcript.append(messages[seat])
        assert len(added) == (5 if count == 5 else 0)  # nothing enters the chain before the end
    assert added == messages  # in seat order
    assert all(message.prev == before for message in added)
    assert transcript.head == reference.head
    assert transcript.to_bytes() == reference.to_bytes()


def test_round_of_some_seats_and_who_is_awaited() -> None:
    transcript = new_transcript()
    transcript.expect_round(Kind.CHIEN_OPEN, [4, 0, 2])
    assert [slot.seat for slot in transcript.awaiting] == [0, 2, 4]
    transcript.append(signed(transcript, 2, Kind.CHIEN_OPEN))
    assert transcript.awaiting == (Slot(Kind.CHIEN_OPEN, 0), Slot(Kind.CHIEN_OPEN, 4))
    verdict = rejection(transcript, signed(transcript, 1, Kind.CHIEN_OPEN))
    assert verdict.reason == "not expected now: chien_open from seat 1"


def test_reopening_the_same_round_keeps_what_was_collected() -> None:
    transcript = new_transcript(players=3)
    transcript.expect_round(Kind.SCORE_SIGN, range(3))
    messages = round_of(transcript, Kind.SCORE_SIGN, range(3))
    transcript.append(messages[0])
    transcript.expect_round(Kind.SCORE_SIGN, [2, 1, 0])
    transcript.append(messages[1])
    assert transcript.append(messages[2]) == messages


def test_dropping_an_unfinished_round_keeps_its_messages_as_evidence() -> None:
    transcript = new_transcript(players=3)
    transcript.expect_round(Kind.DEAL_KEYS, range(3))
    keys = round_of(transcript, Kind.DEAL_KEYS, range(2))
    for message in keys:
        transcript.append(message)
    assert transcript.awaiting == (Slot(Kind.DEAL_KEYS, 2),)
    transcript.expect(Slot(Kind.ABANDON, 0))  # seat 2 withheld its keys: time out
    assert transcript.append(keys[1]) == []  # a late copy still counts as a duplicate
    abandon = signed(transcript, 0, Kind.ABANDON, {"seat": 2})
    assert transcript.append(abandon) == [abandon]
    reloaded = Transcript.from_bytes(transcript.to_bytes())
    assert reloaded.messages == (abandon,)
    assert all(reloaded.holds(message) for message in keys) and reloaded.evidence == tuple(keys)


def test_opening_checks_its_arguments() -> None:
    transcript = new_transcript(players=3)
    with pytest.raises(ValueError, match="no seat 3"):
        transcript.expect(Slot(Kind.PLAY, 3))
    with pytest.raises(ValueError, match="at least one seat"):
        transcript.expect_round(Kind.REVEAL, [])


@pytest.mark.parametrize(
    "table, members, names, error",
    [
        (TABLE[:8], KEYS, None, "table id is 16 bytes"),
        (TABLE, KEYS[:2], None, "3, 4 or 5 members, not 2"),
        (TABLE, KEYS + [Identity.generate().public_key], None, "not 6"),
        (TABLE, KEYS[:3] + [KEYS[0]], None, "share one key"),
        (
            TABLE,
            KEYS[:3] + [(1).to_bytes(32, "little")],
            None,
            "seat 3: not a valid Ed25519 public key",
        ),
        (TABLE, KEYS[:3] + [b"short"], None, "seat 3: not a valid"),
        (TABLE, KEYS, NAMES[:4], "4 names for 5 members"),
    ],
)
def test_transcript_checks_its_table(
    table: bytes, members: list[bytes], names: list[str] | None, error: str
) -> None:
    with pytest.raises(ValueError, match=error):
        Transcript(table, DEAL, members, names)


def test_names_default_to_fingerprints() -> None:
    assert Transcript(TABLE, 0, KEYS[:3]).names == tuple(fingerprint(key) for key in KEYS[:3])


# --- Files -----------------------------------------------------------------------------


def test_file_round_trip() -> None:
    transcript = small_deal()
    data = transcript.to_bytes()
    again = Transcript.from_bytes(data)
    assert again.messages == transcript.messages
    assert again.head == transcript.head
    assert (again.table_id, again.deal) == (TABLE, DEAL)
    assert (again.members, again.names) == (tuple(KEYS), tuple(NAMES))
    assert again.to_bytes() == data
    assert [m.kind for m in again.messages[:5]] == [Kind.COMMIT] * 5
    assert [m.seat for m in again.messages[15:20]] == [0, 1, 2, 3, 4]  # deal keys in seat order


def test_a_reloaded_transcript_catches_equivocation_against_its_chain() -> None:
    transcript = small_deal(players=3)
    last = transcript.messages[-1]
    reloaded = Transcript.from_bytes(transcript.to_bytes())
    other = signed(reloaded, 1, Kind.PLAY, {"position": 13}, prev=last.prev)
    assert rejection(reloaded, other).reason == EQUIVOCATION


def layers(data: bytes) -> list[object]:
    fields: list[object] = msgpack.unpackb(data)
    return fields


def repack(fields: list[object]) -> bytes:
    data: bytes = msgpack.packb(fields)
    return data


@pytest.mark.heavy
def test_every_single_byte_flip_is_detected() -> None:
    """Flip a bit of each byte of a saved transcript in turn: either the file is rejected, or
    (inside a name, a label that is not signed) only that name changed."""
    transcript = small_deal(players=3)
    data = transcript.to_bytes()
    for position in range(len(data)):
        tampered = bytearray(data)
        tampered[position] ^= 1 << (position % 8)
        try:
            loaded = Transcript.from_bytes(bytes(tampered))
        except TranscriptError:
            continue
        assert loaded.messages == transcript.messages and loaded.names != transcript.names, position


@given(st.data())
@settings(max_examples=200, deadline=None)
def test_random_tampering_is_detected(data: st.DataObject) -> None:
    original = small_deal(players=3)
    saved = bytearray(original.to_bytes())
    position = data.draw(st.integers(0, len(saved) - 1))
    value = data.draw(st.integers(0, 255).filter(lambda v: v != saved[position]))
    saved[position] = value
    try:
        loaded = Transcript.from_bytes(bytes(saved))
    except TranscriptError:
        return
    assert loaded.messages == original.messages and loaded.names != original.names


def transcript_file(members: object = None, chain: object = None, **header: object) -> bytes:
    """A transcript file built by hand, bypassing every check of the writer."""
    fields = {"magic": b"tarot/v3/transcript-file", "table": TABLE, "deal": DEAL}
    fields.update(header)
    members = [[key, "x"] for key in KEYS] if members is None else members
    return repack([*fields.values(), members, [] if chain is None else chain, []])


@pytest.mark.parametrize(
    "data, error",
    [
        (b"", "transcript file is not one msgpack value"),
        (b"\x93\x01\x02\x03", "not a transcript file"),
        (transcript_file(magic=b"tarot/v3/proof-bundle"), "not a transcript file"),
        (
            transcript_file(magic=b"tarot/v1/transcript-file"),
            "was recorded by tarot/v1; this program audits tarot/v3 files only (its lock step",
        ),
        (
            transcript_file(magic=b"tarot/v2/transcript-file"),
            "was recorded by tarot/v2; this program audits tarot/v3 files only (its deck is in "
            "Ed25519's prime-order subgroup",
        ),
        (transcript_file(deal="7"), "malformed header"),
        (transcript_file(table=b"short"), "a table id is 16 bytes, not 5"),
        (transcript_file(members=[[KEYS[0]]]), "a member is not [key, name]"),
        (transcript_file(members=[[key, 1] for key in KEYS]), "a member is not [key, name]"),
        (transcript_file(members=[[key, "x"] for key in KEYS[:2]]), "3, 4 or 5 members, not 2"),
        (transcript_file(chain={}), "the message list is a msgpack array"),
        (transcript_file(chain=[1]), "message 0 is bytes, got int 1"),
        (transcript_file(chain=[b"x"]), "message 0: a frame is a msgpack array"),
    ],
)
def test_malformed_files(data: bytes, error: str) -> None:
    with pytest.raises(TranscriptError, match=re.escape(error)):
        Transcript.from_bytes(data)


def test_file_truncated_anywhere_is_rejected() -> None:
    data = small_deal(players=3).to_bytes()
    for end in range(0, len(data), 7):
        with pytest.raises(TranscriptError):
            Transcript.from_bytes(data[:end])


def test_reordered_or_missing_messages_break_the_chain() -> None:
    transcript = small_deal(players=3)
    fields = layers(transcript.to_bytes())
    chain = list(fields[4])  # type: ignore[call-overload]  # the file's fifth field is the list of messages
    swapped = chain[:5] + [chain[6], chain[5]] + chain[7:]  # two sequential shuffle/lock steps
    missing = chain[:4] + chain[5:]
    round_reordered = [chain[1], chain[0]] + chain[2:]  # a concurrent round out of seat order
    for broken in (swapped, missing, round_reordered):
        with pytest.raises(TranscriptError, match="does not build on the messages before it"):
            Transcript.from_bytes(repack(fields[:4] + [broken, fields[5]]))


def test_file_with_a_forged_or_foreign_message_is_rejected() -> None:
    transcript = small_deal(players=3)
    fields = layers(transcript.to_bytes())
    forged = signed(transcript, 2, Kind.PLAY, signer=PLAYERS[0])
    foreign = signed(transcript, 2, Kind.PLAY, deal=DEAL + 1)
    for message, reason in ((forged, "bad signature"), (foreign, "message for deal 8")):
        chain = fields[4] + [encode(message)]  # type: ignore[operator]  # the file's fifth field is the list of messages
        where = f"message {len(chain) - 1} (play from seat 2): {reason}"
        with pytest.raises(TranscriptError, match=re.escape(where)):
            Transcript.from_bytes(repack(fields[:4] + [chain, fields[5]]))
        where = f"evidence message 0 (play from seat 2): {reason}"
        with pytest.raises(TranscriptError, match=re.escape(where)):
            Transcript.from_bytes(repack(fields[:5] + [[encode(message)]]))


def test_non_canonical_file_is_rejected() -> None:
    transcript = small_deal(players=3)
    fields = layers(transcript.to_bytes())
    duplicated_evidence = fields[:5] + [[fields[4][0]]]  # type: ignore[index]  # the file's fifth field is the list of messages
    with pytest.raises(TranscriptError, match="canonical"):
        Transcript.from_bytes(repack(duplicated_evidence))
