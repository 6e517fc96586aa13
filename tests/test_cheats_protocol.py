"""The detection the cheat lab needed in ``protocol``, one piece at a time: rewinding to a
common head after a proof, closing the reveal with the seats that answered, forgeries and proof
files, offences proven by signed messages alone, relays, and the early buffer's share per seat."""

from __future__ import annotations

import msgpack
import pytest
from test_transcript import KEYS, NAMES, PLAYERS, TABLE, new_transcript, round_of, signed

from client.simulation import Cheat, play_one_deal, sim_table
from lab.cheats.attacks import WithholdReveal
from protocol.replication.audit import audit_transcript, signed_offence
from protocol.replication.machine import MAX_EARLY_PER_SEAT, SeatMachine
from protocol.replication.manifest import sign_manifest
from protocol.replication.messages import Kind, encode, sign_message
from protocol.replication.payloads import UNUSED_KIND
from protocol.replication.public import Stage
from protocol.replication.transcript import (
    EQUIVOCATION,
    Slot,
    Transcript,
    TranscriptError,
    proof_file,
    read_proof_file,
)
from protocol.replication.verdict import Verdict


def test_rewind_cuts_the_chain_back_and_keeps_what_it_cut_as_evidence() -> None:
    transcript = new_transcript(players=3)
    transcript.expect(Slot(Kind.SHUFFLE, 0))
    first = signed(transcript, 0, Kind.SHUFFLE)
    transcript.append(first)
    fork = transcript.head
    transcript.expect(Slot(Kind.SHUFFLE, 1))
    second = signed(transcript, 1, Kind.SHUFFLE)
    transcript.append(second)
    assert transcript.rewind(fork) == [second]
    assert transcript.messages == (first,) and transcript.head == fork
    assert transcript.evidence == (second,)
    with pytest.raises(ValueError, match="never reached"):
        transcript.rewind(bytes(32))
    # The chain goes on from there, and the file reads back.
    transcript.expect_round(Kind.REVEAL, range(3))
    for message in round_of(transcript, Kind.REVEAL, range(3)):
        transcript.append(message)
    assert Transcript.from_bytes(transcript.to_bytes()).messages == transcript.messages


def test_close_round_takes_the_seats_that_answered_in_seat_order() -> None:
    transcript = new_transcript(players=4)
    assert transcript.close_round() == []
    transcript.expect_round(Kind.REVEAL, range(4))
    reveals = round_of(transcript, Kind.REVEAL, range(4))
    for message in (reveals[2], reveals[0]):
        assert transcript.append(message) == []
    assert transcript.close_round() == [reveals[0], reveals[2]]
    assert transcript.messages == (reveals[0], reveals[2])
    assert Transcript.from_bytes(transcript.to_bytes()).messages == transcript.messages


def test_a_forgery_is_kept_in_the_file_and_checked_when_read() -> None:
    transcript = new_transcript(players=3)
    transcript.expect(Slot(Kind.BID, 1))
    forged = signed(transcript, 1, Kind.BID, signer=PLAYERS[2])  # seat 2 signs for seat 1
    outsider = signed(transcript, 1, Kind.BID, {"n": 1}, signer=PLAYERS[4])  # not at this table
    transcript.keep(forged)
    transcript.keep(outsider)
    assert transcript.evidence == (forged,)
    reloaded = Transcript.from_bytes(transcript.to_bytes())
    assert reloaded.evidence == (forged,)
    verdict = signed_offence(reloaded.members, reloaded.evidence)
    assert verdict == Verdict(
        2, "bid", "impersonation: signed a message claiming seat 1", (forged.digest.hex(),)
    )
    # A "forgery" signed by the seat it claims is no forgery: the file is refused.
    fields = msgpack.unpackb(transcript.to_bytes())
    fields[6] = [encode(signed(transcript, 1, Kind.BID))]
    with pytest.raises(TranscriptError, match="not signed by another member"):
        Transcript.from_bytes(msgpack.packb(fields))


def test_signed_offences_are_found_wherever_they_are_kept() -> None:
    transcript = new_transcript()
    transcript.expect(Slot(Kind.BID, 3))
    first = signed(transcript, 3, Kind.BID, {"contract": None})
    second = signed(transcript, 3, Kind.BID, {"contract": "garde"})
    request = signed(transcript, 4, Kind.ABANDON, {"request": "keys"})
    assert signed_offence(KEYS, [first]) is None
    equivocation = signed_offence(KEYS, [second, first])
    assert equivocation is not None and equivocation.reason == EQUIVOCATION
    assert equivocation.evidence == tuple(sorted((first.digest.hex(), second.digest.hex())))
    unused = signed_offence(KEYS, [request])
    assert unused == Verdict(4, "abandon", UNUSED_KIND, (request.digest.hex(),))
    assert signed_offence(KEYS, [request, second, first]) == equivocation  # the first by seat


def test_a_proof_file_states_its_verdict_and_refuses_tampering() -> None:
    transcript = Transcript(TABLE, 7, KEYS, NAMES)
    verdict = Verdict(2, "deal", "its key for position 6 does not match its lock", ("ab",))
    manifest = sign_manifest(TABLE, "club", list(zip(PLAYERS, NAMES)))
    data = proof_file(transcript, verdict, manifest)
    stated, inner, carried = read_proof_file(data)
    assert stated == verdict and inner.to_bytes() == transcript.to_bytes() and carried == manifest
    fields = msgpack.unpackb(data)
    for change in ([9, "deal", "x", []], ["2", "deal", "x", []], [2, "deal", "x", [1]]):
        with pytest.raises(TranscriptError):
            read_proof_file(msgpack.packb([fields[0], change, fields[2], fields[3]]))
    for signed_part in ([fields[3][0]], [fields[3][0], [1]], ["manifest", fields[3][1]]):
        with pytest.raises(TranscriptError, match="manifest"):
            read_proof_file(msgpack.packb([*fields[:3], signed_part]))
    with pytest.raises(TranscriptError, match="without the table's signed manifest"):
        read_proof_file(msgpack.packb(fields[:3]))
    with pytest.raises(TranscriptError, match="not a proof file"):
        read_proof_file(transcript.to_bytes())


def test_a_withheld_reveal_names_the_seat_that_withheld_it_not_the_first_seat() -> None:
    """The gap: when the reveal timed out, the honest seats' own reveals were dropped with the
    unfinished round, so the audit found no seed at all and named seat 0."""
    # Seed 12: the basic bots pass this deal (they took seed 11's once they bid like people).
    table, identities = sim_table(4, seed=12)
    machines = play_one_deal(
        table, identities, 0, 0, 12, ["basic"], cheat=Cheat(3, "withhold-reveal")
    )
    assert isinstance(machines[3], WithholdReveal) and machines[3].attempted
    for machine in machines[:3]:
        assert machine.done and sorted(machine.public.seeds) == [0, 1, 2]
        assert machine.audit is not None and machine.audit.verdict is not None
        assert (machine.audit.verdict.seat, machine.audit.verdict.step) == (3, "reveal")
        # all passed: nothing to score
        assert machine.audit.abandoned and set(machine.audit.scores) == {0}
        # and nothing to take: a reveal timed out before play costs nothing
        assert machine.audit.penalised == ()
        _, _, offline = audit_transcript(Transcript.from_bytes(machine.transcript.to_bytes()))
        assert offline.verdict == machine.audit.verdict


def test_honest_seats_relay_what_they_accept_once() -> None:
    table, identities = sim_table(3, seed=2)
    machines = [SeatMachine(table, 0, 0, s, identities[s], bytes([s]) * 32) for s in range(3)]
    commit = machines[0].start()[0]
    machines[1].start()
    assert machines[1].receive(commit) == [commit]  # relayed...
    assert machines[1].receive(commit) == []  # ...once


def test_early_messages_are_kept_within_each_seats_share() -> None:
    """A seat that floods messages on heads nobody reached fills its own share, so a message
    of an honest seat that comes early still finds room."""
    table, identities = sim_table(3, seed=2)
    machines = [SeatMachine(table, 0, 0, s, identities[s], bytes([s]) * 32) for s in range(3)]
    target = machines[0]
    target.start()
    for n in range(MAX_EARLY_PER_SEAT + 10):
        flood = sign_message(
            identities[2], table.table_id, 0, Kind.PLAY, 2, {"n": n}, bytes([n]) * 32
        )
        assert target.receive(flood) == []
    assert len(target._early) == MAX_EARLY_PER_SEAT
    early = sign_message(identities[1], table.table_id, 0, Kind.SHUFFLE, 1, {"n": 0}, bytes(32))
    target.receive(early)
    assert early in target._early
    assert target.public.stage is Stage.COMMIT
