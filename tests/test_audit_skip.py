"""``tarot audit`` does not verify again the proofs of steps the seed replay settles (issue
39, item 5): once every seat revealed its seed, each shuffle and lock is recomputed and
compared point by point, and a step that replays exactly needs no proof.  Where a seed is
missing nothing is replayed, and every proof is verified; and every transcript of the cheat
lab gets the same audit with the skip as without it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from client.simulation import play_one_deal, sim_table
from lab.cheats.attacks import CHEATS, Cheater
from lab.cheats.runs import run_cheat
from protocol.deck import public_deck as deck_module
from protocol.replication.audit import DealAudit, audit_deal, dealer_of
from protocol.replication.identity import Identity
from protocol.replication.machine import SeatMachine
from protocol.replication.messages import Kind, Message, sign_message
from protocol.replication.public import TableSetup
from protocol.replication.transcript import Transcript

pytestmark = pytest.mark.heavy

PLAYERS = 3
SEED = 5


def _table(transcript: Transcript) -> TableSetup:
    return TableSetup(transcript.table_id, transcript.members, transcript.names)


def _audit(transcript: Transcript, messages: list[Message], settle: bool) -> DealAudit:
    return audit_deal(
        _table(transcript),
        transcript.deal,
        dealer_of(messages),
        messages,
        transcript.evidence,
        settle_by_seeds=settle,
    )


@contextmanager
def proofs_verified(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every shuffle and lock proof the deck verifies, by kind, while in the block."""
    calls: list[str] = []

    def counting(kind: str, real: Callable[..., bool]) -> Callable[..., bool]:
        def verify(*args: Any) -> bool:
            calls.append(kind)
            return real(*args)

        return verify

    with monkeypatch.context() as patch:
        patch.setattr(
            deck_module, "verify_shuffle", counting("shuffle", deck_module.verify_shuffle)
        )
        patch.setattr(deck_module, "verify_lock", counting("lock", deck_module.verify_lock))
        yield calls


def _clean_deal() -> tuple[Transcript, list[Identity]]:
    table, identities = sim_table(PLAYERS, SEED)
    machines = play_one_deal(table, identities, 0, 0, SEED, ["basic"])
    transcript = machines[0].transcript
    assert machines[0].audit is not None and machines[0].audit.outcome is not None
    return transcript, identities


def _same(first: DealAudit, second: DealAudit) -> None:
    assert first.verdict == second.verdict
    assert first.scores == second.scores
    assert first.abandoned == second.abandoned
    assert first.penalties == second.penalties
    assert first.outcome == second.outcome


def test_the_seeds_settle_every_step_and_no_proof_is_verified_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    transcript, _ = _clean_deal()
    messages = list(transcript.messages)
    with proofs_verified(monkeypatch) as calls:
        settled = _audit(transcript, messages, settle=True)
    assert calls == [], "a proof the seeds settle was verified again"
    with proofs_verified(monkeypatch) as calls:
        proved = _audit(transcript, messages, settle=False)
    assert sorted(calls) == ["lock"] * PLAYERS + ["shuffle"] * PLAYERS
    assert settled.ok and settled.outcome is not None
    _same(settled, proved)


def test_where_a_seed_is_missing_every_proof_is_verified(monkeypatch: pytest.MonkeyPatch) -> None:
    transcript, _ = _clean_deal()
    kept = [m for m in transcript.messages if not (m.kind is Kind.REVEAL and m.seat == 1)]
    with proofs_verified(monkeypatch) as calls:
        audit = _audit(transcript, kept, settle=True)
    assert sorted(calls) == ["lock"] * PLAYERS + ["shuffle"] * PLAYERS
    _same(audit, _audit(transcript, kept, settle=False))


def _with_bad_proof(messages: list[Message], identity: Identity, seat: int) -> list[Message]:
    """The chain with ``seat``'s shuffle proved by the proof of another seat's shuffle (its
    points honest, its proof garbage), signed again by ``seat``."""
    shuffles = {m.seat: m for m in messages if m.kind is Kind.SHUFFLE}
    other = shuffles[(seat + 1) % PLAYERS]
    out = []
    for message in messages:
        if message.kind is Kind.SHUFFLE and message.seat == seat:
            assert isinstance(message.payload, dict) and isinstance(other.payload, dict)
            payload = {**message.payload, "proof": other.payload["proof"]}
            message = sign_message(
                identity,
                message.table_id,
                message.deal,
                message.kind,
                message.seat,
                payload,
                message.prev,
            )
        out.append(message)
    return out


def test_a_bad_proof_whose_seat_withheld_its_seed_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The seat's points are honest, its proof is not, and it kept its seed: nothing replays
    its step, so its proof is verified — and refused, naming it."""
    transcript, identities = _clean_deal()
    bad = _with_bad_proof(list(transcript.messages), identities[1], 1)
    withheld = [m for m in bad if not (m.kind is Kind.REVEAL and m.seat == 1)]
    with proofs_verified(monkeypatch) as calls:
        audit = _audit(transcript, withheld, settle=True)
    assert "shuffle" in calls
    assert audit.verdict is not None and audit.verdict.seat == 1
    assert audit.verdict.step == "shuffle" and "proof" in audit.verdict.reason
    _same(audit, _audit(transcript, withheld, settle=False))


@pytest.mark.parametrize("kind", sorted(CHEATS))
def test_every_cheat_of_the_lab_is_audited_the_same_with_the_skip(kind: str) -> None:
    """Each honest seat's transcript of the attack, audited with and without the skip."""
    machines: dict[int, SeatMachine] = {}

    def watch(machine: SeatMachine) -> None:
        machines[id(machine)] = machine

    run = run_cheat(kind, PLAYERS, 1, watch=watch)
    honest = [m for m in machines.values() if not isinstance(m, Cheater) and m.seat != run.seat]
    last = max(m.transcript.deal for m in honest)
    audited = 0
    for machine in honest:
        transcript = machine.transcript
        if transcript.deal != last or not transcript.messages:
            continue
        messages = list(transcript.messages)
        _same(_audit(transcript, messages, settle=True), _audit(transcript, messages, settle=False))
        audited += 1
    assert audited >= PLAYERS - 1
