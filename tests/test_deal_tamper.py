"""Tampering at the message level: each deviation is refused without effect, or stops the
deal with the right verdict; ``tarot audit`` says the same offline."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import msgpack
import pytest

from client.cli import main as tarot
from client.simulation import Cheat, play_one_deal, sim_table
from protocol.bots.bots import make_bot
from protocol.bots.players import decide
from protocol.replication.audit import audit_deal
from protocol.replication.identity import Identity
from protocol.replication.machine import SeatMachine
from protocol.replication.manifest import SilenceCost
from protocol.replication.messages import Kind, Message, decode, encode, sign_message
from protocol.replication.public import Stage
from protocol.rules.deal import Bid, Play
from protocol.rules.variants import Contract

pytestmark = pytest.mark.heavy

PLAYERS = 4


class Table:
    """Four seats in one process, pumped by hand so a test can step in between messages."""

    def __init__(
        self, seed: int = 6, deal: int = 0, silence: SilenceCost = SilenceCost.NOTHING
    ) -> None:
        table, self.identities = sim_table(PLAYERS, seed)
        self.table = replace(table, silence=silence)
        self.machines = [
            SeatMachine(
                self.table, deal, 0, s, self.identities[s], (bytes([seed, deal, s]) * 11)[:32]
            )
            for s in range(PLAYERS)
        ]
        self.policies = [make_bot("basic", random.Random(s)) for s in range(PLAYERS)]
        self.queue: list[Message] = [m for machine in self.machines for m in machine.start()]

    def deliver(self, message: Message, to: list[int] | None = None) -> None:
        for machine in self.machines:
            if machine.seat != message.seat and (to is None or machine.seat in to):
                self.queue.extend(machine.receive(decode(encode(message))))

    def pump(self, done: Callable[[], bool] = lambda: False) -> None:
        """Deliver queued messages, one at a time, until ``done`` or nothing is left."""
        while self.queue and not done():
            self.deliver(self.queue.pop(0))

    def run_until(self, done: Callable[[], bool]) -> None:
        while not done():
            self.pump(done)
            if done():
                return
            deciding = next((m for m in self.machines if m.decision() is not None), None)
            if deciding is None:  # somebody stopped answering: every seat's timeout
                stalled = [message for m in self.machines for message in m.stall()]
                assert stalled or self.queue, "the deal is stuck"
                self.queue.extend(stalled)
                continue
            assert deciding.game is not None
            for action in decide(deciding.game, self.policies[deciding.seat]):
                self.queue.extend(deciding.act(action))

    def finish(self) -> None:
        self.run_until(lambda: all(m.done for m in self.machines))

    def signed(
        self, seat: int, kind: Kind, payload: object, *, deal: int = 0, by: int | None = None
    ) -> Message:
        identity = self.identities[seat if by is None else by]
        head = self.machines[seat].transcript.head
        return sign_message(identity, self.table.table_id, deal, kind, seat, payload, head)  # type: ignore[arg-type]  # an opening's to_wire is typed dict[str, object], a WireValue in fact


def bidding_turn(table: Table) -> int:
    game = table.machines[0].game
    assert game is not None and game.to_act is not None
    return game.to_act


def at_bidding(table: Table) -> bool:
    return all(m.public.stage is Stage.BIDDING for m in table.machines) and not table.queue


def test_bad_signature_is_refused_and_changes_nothing() -> None:
    table = Table()
    table.run_until(lambda: at_bidding(table))
    seat = bidding_turn(table)
    honest = table.signed(seat, Kind.BID, {"contract": None})
    forged = Message(
        honest.version,
        honest.table_id,
        honest.deal,
        honest.kind,
        honest.seat,
        honest.payload,
        honest.prev,
        bytes(64),
    )
    before = [m.transcript.head for m in table.machines]
    table.deliver(forged)
    assert [m.transcript.head for m in table.machines] == before
    assert any(
        "signature" in v.reason for m in table.machines if m.seat != seat for v in m.rejected
    )
    table.finish()
    assert table.machines[0].audit is not None and table.machines[0].audit.ok


def test_a_member_cannot_speak_for_another_seat() -> None:
    table = Table()
    table.run_until(lambda: at_bidding(table))
    seat = bidding_turn(table)
    impostor = (seat + 1) % PLAYERS
    forged = table.signed(seat, Kind.BID, {"contract": Contract.GARDE_CONTRE.code}, by=impostor)
    before = [m.transcript.head for m in table.machines]
    for machine in table.machines:  # the seat it claims gets it too: it must know
        if machine.seat != impostor:
            table.queue.extend(machine.receive(forged))
    assert [m.transcript.head for m in table.machines] == before  # the bid was not taken
    table.finish()
    for machine in table.machines:  # the signature proves who tried: the impostor is named
        if machine.seat != impostor:
            assert machine.audit is not None and machine.audit.verdict is not None
            assert (
                machine.audit.verdict.seat == impostor
                and "impersonation" in machine.audit.verdict.reason
            )


def test_a_message_replayed_from_an_earlier_deal_is_refused() -> None:
    earlier = Table(deal=0)
    earlier.run_until(lambda: at_bidding(earlier))
    seat = bidding_turn(earlier)
    old = earlier.machines[seat].act(Bid(seat, Contract.GARDE))[0]
    later = Table(deal=1)
    later.run_until(lambda: at_bidding(later))
    before = [m.transcript.head for m in later.machines]
    later.deliver(old)
    assert [m.transcript.head for m in later.machines] == before
    assert any("deal" in v.reason for m in later.machines for v in m.rejected)
    later.finish()


def test_equivocation_is_proven_by_the_two_signed_messages() -> None:
    table = Table()
    table.run_until(lambda: at_bidding(table))
    seat = bidding_turn(table)
    first = table.signed(seat, Kind.BID, {"contract": None})
    second = table.signed(seat, Kind.BID, {"contract": Contract.GARDE.code})
    others = [s for s in range(PLAYERS) if s != seat]
    table.deliver(first, to=others[:1])
    table.deliver(second, to=others[1:])
    # Each honest seat relays what it got; a seat that sees both holds the proof.
    table.deliver(first, to=others)
    table.deliver(second, to=others)
    table.queue.clear()
    for machine in table.machines:
        if machine.seat == seat:
            continue
        verdict = machine.public.verdict
        assert verdict is not None and verdict.seat == seat and "equivocation" in verdict.reason
        assert {first.digest.hex(), second.digest.hex()} == set(verdict.evidence)


def test_out_of_turn_play_is_refused_without_effect() -> None:
    table = Table()
    table.run_until(
        lambda: all(m.public.stage is Stage.PLAY for m in table.machines) and not table.queue
    )
    game = table.machines[0].game
    assert game is not None
    waiting = game.to_act
    assert waiting is not None
    intruder = (waiting + 1) % PLAYERS
    mine = table.machines[intruder]
    assert mine.game is not None
    card = mine.game.hand(intruder)[0]
    payload = {"open": mine.secret.open([card]).to_wire()}
    before = [m.transcript.head for m in table.machines]
    table.deliver(table.signed(intruder, Kind.PLAY, payload))
    assert [m.transcript.head for m in table.machines] == before
    table.finish()
    assert table.machines[0].audit is not None and table.machines[0].audit.ok


def test_a_card_not_in_hand_stops_the_deal_naming_the_player() -> None:
    table = Table()
    table.run_until(
        lambda: all(m.public.stage is Stage.PLAY for m in table.machines) and not table.queue
    )
    game = table.machines[0].game
    assert game is not None and game.to_act is not None
    seat = game.to_act
    cheater = table.machines[seat]
    assert cheater.game is not None
    mine = cheater.game.hand(seat)
    other = next(c for c in table.machines[(seat + 1) % PLAYERS].public.own_hand or ())
    wire = cheater.secret.open([mine[0]]).to_wire()
    wire["openings"][0][2] = other.index  # claim another seat's card at my own position
    table.deliver(table.signed(seat, Kind.PLAY, {"open": wire}))
    honest = [m for m in table.machines if m.seat != seat]
    for machine in honest:
        verdict = machine.public.verdict
        assert verdict is not None and verdict.seat == seat, verdict
        assert machine.public.stage is Stage.REVEAL  # the deal stops: seeds are revealed
    # The cheater's own machine never took the card it was made to sign: alone on its chain,
    # its record does not stand (protocol.replication.agreement), so only the honest seats finish.
    table.run_until(lambda: all(m.done for m in honest))
    for machine in honest:
        assert machine.audit is not None and machine.audit.verdict is not None
        assert machine.audit.verdict.seat == seat and machine.audit.abandoned
        assert machine.audit.penalised == (seat,)  # a proven deviation is never free
    offline = audit_deal(table.table, 0, 0, honest[0].transcript.messages)
    assert honest[0].audit is not None and offline.verdict == honest[0].audit.verdict


def test_a_revoke_is_caught_at_the_audit_and_scored_with_the_penalty(tmp_path: Path) -> None:
    table, identities = sim_table(PLAYERS, seed=3)
    for deal in range(4):
        machines = play_one_deal(
            table, identities, deal, deal % PLAYERS, 3, ["basic"], Cheat(1, "revoke")
        )
        honest = [m for m in machines if m.seat != 1]
        audit = honest[0].audit
        assert audit is not None
        if audit.verdict is None:
            continue  # the cheater never had an illegal card to play
        for machine in honest:
            assert machine.audit is not None and machine.audit.verdict is not None
            assert machine.audit.verdict.seat == 1 and "renonce" in machine.audit.verdict.reason
            assert machine.audit.penalised == (1,)
        path = tmp_path / "revoke.tarot"
        path.write_bytes(honest[0].transcript.to_bytes())
        assert tarot(["audit", str(path)]) == 1
        return
    pytest.fail("the revoking seat never found an illegal card in four deals")


def test_tarot_audit_clean_tampered_and_unreadable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table, identities = sim_table(PLAYERS, seed=8)
    machines = play_one_deal(table, identities, 0, 0, 8, ["basic"])
    data = machines[2].transcript.to_bytes()
    clean = tmp_path / "clean.tarot"
    clean.write_bytes(data)
    assert tarot(["audit", str(clean)]) == 0
    assert "audit: ok" in capsys.readouterr().out
    corrupt = tmp_path / "corrupt.tarot"
    flipped = bytearray(data)
    flipped[len(flipped) // 2] ^= 0x40
    corrupt.write_bytes(bytes(flipped))
    assert tarot(["audit", str(corrupt)]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert tarot(["audit", str(tmp_path / "missing.tarot")]) == 2


@pytest.mark.parametrize(
    ("version", "why"),
    [
        ("v1", "its lock step let other seats read hands"),
        ("v2", "its deck is in Ed25519's prime-order subgroup"),
    ],
)
def test_tarot_audit_refuses_an_older_protocol_s_transcript_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str, why: str
) -> None:
    """A v1 deal was dealt by a lock step that let other seats read hands; a v2 deal's points
    are of Ed25519's subgroup, not of ristretto255: either is refused as such, never audited
    as if it were of v3."""
    table, identities = sim_table(PLAYERS, seed=8)
    machines = play_one_deal(table, identities, 0, 0, 8, ["basic"])
    old = tmp_path / "old.tarot"
    old.write_bytes(
        machines[0]
        .transcript.to_bytes()
        .replace(b"tarot/v3/transcript-file", f"tarot/{version}/transcript-file".encode())
    )
    assert tarot(["audit", str(old)]) == 2
    error = capsys.readouterr().err
    assert f"was recorded by tarot/{version}; this program audits tarot/v3 files only" in error
    assert why in error and f"audit it with a build of tarot/{version}" in error
    assert "cannot read" not in error  # it was read: refused for its version


def test_tarot_audit_refuses_a_protocol_v2_proof_file_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A v2 proof file names its cheater with points of Ed25519's subgroup: refused as a v2
    proof file, before anything in it is read."""
    old = tmp_path / "cheat.proof"
    old.write_bytes(msgpack.packb([b"tarot/v2/proof-file", b"verdict", b"deal", b"manifest"]))
    assert tarot(["audit", str(old)]) == 2
    error = capsys.readouterr().err
    assert "this proof file was recorded by tarot/v2; this program audits tarot/v3" in error
    assert "cannot read" not in error


def test_a_seat_that_withholds_its_deal_keys_is_named_and_nothing_is_scored() -> None:
    table = Table()
    silent = 2
    table.run_until(lambda: all(m.public.stage is Stage.DEAL_KEYS for m in table.machines))
    table.queue = [m for m in table.queue if not (m.seat == silent and m.kind is Kind.DEAL_KEYS)]
    table.pump()
    assert all(m.public.stage is Stage.DEAL_KEYS for m in table.machines if m.seat != silent)
    honest = [m for m in table.machines if m.seat != silent]
    for _ in range(3):
        for machine in honest:
            table.queue.extend(machine.stall())
        table.queue = [m for m in table.queue if m.seat != silent]
        table.pump()
    for machine in honest:
        assert machine.done
        assert machine.audit is not None and machine.audit.verdict is not None
        assert machine.audit.verdict.seat == silent
        assert set(machine.audit.scores) == {0}
    # The saved transcript tells the same story offline.
    witness = honest[0].transcript
    offline = audit_deal(table.table, 0, 0, witness.messages)
    assert offline.verdict is not None and offline.verdict.seat == silent


def test_identity_mismatch_is_refused() -> None:
    table, identities = sim_table(PLAYERS, seed=1)
    with pytest.raises(ValueError, match="not the member"):
        SeatMachine(table, 0, 0, 1, Identity.generate())


def test_own_illegal_action_is_refused_before_anything_is_signed() -> None:
    table = Table()
    table.run_until(
        lambda: all(m.public.stage is Stage.PLAY for m in table.machines) and not table.queue
    )
    game = table.machines[0].game
    assert game is not None and game.to_act is not None
    seat = game.to_act
    machine = table.machines[seat]
    assert machine.game is not None
    illegal = [c for c in machine.game.hand(seat) if c not in machine.game.legal_cards(seat)]
    head = machine.transcript.head
    if illegal:
        with pytest.raises(Exception, match="must|called"):
            machine.act(Play(seat, illegal[0]))
    with pytest.raises(Exception, match="plays seat"):
        machine.act(Play((seat + 1) % PLAYERS, machine.game.hand(seat)[0]))
    assert machine.transcript.head == head
