"""Cheating is never free (issue 26, item 7): once every card is played the deal is scored,
whatever a seat does after its last card; the seat that keeps its seed or deviates then takes
the penalty row; a proven deviation always costs its culprit the penalty; a silence before the
reveal costs what the table's signed rule says — by default, the penalty once the silent seat
could read its hand (``tests/test_leaving.py``)."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
from test_deal_tamper import Table

from client.cli import main as tarot
from client.simulation import Cheat, play_one_deal, sim_table, write_proofs
from protocol.deck.audit_deck import audit_deck, open_deck
from protocol.deck.payloads import Reveal
from protocol.replication.audit import DealAudit, audit_deal
from protocol.replication.machine import SeatMachine
from protocol.replication.manifest import SilenceCost
from protocol.replication.messages import Kind
from protocol.replication.public import Stage
from protocol.replication.verdict import Fault
from protocol.rules.scoring import RENONCE_PENALTY, RowKind, ScoreSheet

pytestmark = pytest.mark.heavy


@cache
def _deal(players: int, seed: int, withholder: int | None) -> tuple[SeatMachine, ...]:
    """A ``tarot sim`` deal, honest or with ``withholder`` keeping its seed after its last card
    (the same cards and the same play either way: seeds and bots come from ``seed``)."""
    table, identities = sim_table(players, seed)
    cheat = None if withholder is None else Cheat(withholder, "withhold-reveal")
    return tuple(play_one_deal(table, identities, 0, seed % players, seed, ["basic"], cheat))


def _audit(machine: SeatMachine) -> DealAudit:
    assert machine.audit is not None
    return machine.audit


#: (players, seed, the seat that keeps its seed): the taker of a Garde, whose hand and écart
#: only the elimination gives; a defender at a Garde Sans, whose chien nobody turned; the taker
#: of a Garde at five, with a partner.
WITHHELD = [(3, 0, 2), (3, 4, 0), (5, 2, 0)]


@pytest.mark.parametrize(("players", "seed", "withholder"), WITHHELD)
def test_a_seed_kept_after_the_last_card_the_deal_is_scored_and_the_withholder_penalised(
    players: int, seed: int, withholder: int
) -> None:
    clean = _audit(_deal(players, seed, None)[0])
    machines = _deal(players, seed, withholder)
    honest = [m for m in machines if m.seat != withholder]
    assert clean.ok and clean.outcome is not None and all(m.public.played_out for m in honest)
    for machine in honest:
        audit = _audit(machine)
        assert (audit.scores, audit.outcome, audit.abandoned) == (
            clean.scores,
            clean.outcome,
            False,
        )
        assert audit.verdict is not None and audit.verdict.fault is Fault.SILENCE
        assert (audit.verdict.seat, audit.verdict.step) == (withholder, "reveal")
        assert audit.penalised == (withholder,)
        sheet = ScoreSheet([f"p{s}" for s in range(players)])
        sheet.add_deal(list(audit.scores))
        audit.charge(sheet)
        assert [row.kind for row in sheet.rows] == [RowKind.DEAL, RowKind.PENALTY]
        assert sheet.rows[1].scores[withholder] == -RENONCE_PENALTY
    # What the open record gives is the deal the withholder's seed would have shown.
    public = honest[0].public
    truth = audit_deck(public.deck.record, {**public.seeds, withholder: machines[withholder].seed})
    shown = open_deck(public.deck.record, public.deck.chien())
    assert truth.verdict is None and shown.verdict is None
    assert {s: set(h) for s, h in shown.hands.items()} == {
        s: set(h) for s, h in truth.hands.items()
    }
    assert (set(shown.chien), set(shown.ecart or ())) == (set(truth.chien), set(truth.ecart or ()))


def test_the_proof_of_a_kept_seed_says_silence_unproven_not_cheat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    machines = _deal(3, 0, 2)
    paths = write_proofs(machines, Cheat(2, "withhold-reveal"), tmp_path, "deal")
    assert len(paths) == 2
    assert tarot(["audit", str(paths[0])]) == 1
    out = capsys.readouterr().out
    assert "audit: SILENT — seat 2 (bot-2 [" in out and "CHEAT" not in out
    assert "unproven: reported silent by seats 0, 1" in out
    assert (
        f"penalty: {RENONCE_PENALTY} points against seat 2 (reveal: did not reveal its seed)" in out
    )
    assert "proof: unproven" in out and "proof: holds" not in out


def _played_to(table: Table, seat: int, kind: Kind) -> None:
    """Every card played, until ``seat`` sends its ``kind`` message (the reveal, the score
    signature), which is taken out of the queue for the test to replace."""
    table.run_until(lambda: any(m.seat == seat and m.kind is kind for m in table.queue))
    table.queue = [m for m in table.queue if not (m.seat == seat and m.kind is kind)]
    assert all(m.public.played_out for m in table.machines)


def finish_without(table: Table, *cut: int) -> list[SeatMachine]:
    """Deliver among the other seats only, timing out whoever they still wait for, until
    they are done (each ``cut`` seat's own machine holds whatever it really sent, which nobody
    got)."""
    honest = [m for m in table.machines if m.seat not in cut]
    others = [m.seat for m in honest]
    for _ in range(4):
        while table.queue:
            message = table.queue.pop(0)
            if message.seat not in cut:
                table.deliver(message, to=others)
        if all(m.done for m in honest):
            return honest
        for machine in honest:
            table.queue.extend(machine.stall())
    raise AssertionError("the honest seats never finished the deal")


@cache
def _clean() -> DealAudit:
    table = Table()
    table.finish()
    audit = _audit(table.machines[0])
    assert audit.ok and audit.outcome is not None
    return audit


def _scored_with_the_penalty(machine: SeatMachine, culprit: int) -> DealAudit:
    audit, expected = _audit(machine), _clean()
    assert (audit.scores, audit.outcome, audit.abandoned) == (
        expected.scores,
        expected.outcome,
        False,
    )
    assert audit.verdict is not None and audit.verdict.proven and audit.verdict.seat == culprit
    # Offline, from each replica's own transcript: the same penalty.
    offline = audit_deal(
        machine.table, 0, 0, machine.transcript.messages, machine.transcript.evidence
    )
    assert (offline.scores, offline.verdict, offline.penalties) == (
        audit.scores,
        audit.verdict,
        audit.penalties,
    )
    assert audit.penalised == (culprit,)
    return audit


def test_a_bad_reveal_after_the_last_card_costs_the_penalty_and_the_deal_stands() -> None:
    table, cheater = Table(), 1
    _played_to(table, cheater, Kind.REVEAL)
    table.deliver(
        table.signed(
            cheater, Kind.REVEAL, {"deck": Reveal(cheater, bytes(32)).to_wire(), "gone": []}
        )
    )
    for machine in finish_without(table, cheater):
        audit = _scored_with_the_penalty(machine, cheater)
        assert audit.verdict is not None and "does not match its commitment" in audit.verdict.reason
        # The bad reveal was its answer: the round closed with it, nobody was timed out at the
        # reveal (each replica would have timed out the others), only its signature was missed.
        assert machine.public.stalled_at == {cheater: Stage.SIGN}


def test_a_score_signed_wrongly_costs_the_penalty_and_the_deal_stands() -> None:
    table, cheater = Table(), 2
    _played_to(table, cheater, Kind.SCORE_SIGN)
    table.deliver(
        table.signed(
            cheater, Kind.SCORE_SIGN, {"scores": [0, 0, 0, 0], "culprit": None, "rule": None}
        )
    )
    for machine in finish_without(table, cheater):
        audit = _scored_with_the_penalty(machine, cheater)
        assert (
            audit.verdict is not None
            and audit.verdict.reason == "signed a score that the audit does not give"
        )


@pytest.mark.parametrize(
    ("rule", "penalised"),
    [(SilenceCost.NOTHING, False), (SilenceCost.AFTER_SEEING, True), (SilenceCost.PENALTY, True)],
)
def test_silence_mid_deal_abandons_it_and_costs_what_the_table_rule_says(
    rule: SilenceCost, penalised: bool
) -> None:
    table = Table(silence=rule)
    table.run_until(
        lambda: all(m.public.stage is Stage.PLAY for m in table.machines) and not table.queue
    )
    game = table.machines[0].public.game
    assert game is not None and game.to_act is not None
    silent = game.to_act  # its cable is pulled: it never plays
    honest = finish_without(table, silent)
    offline = audit_deal(replace(table.table, silence=rule), 0, 0, honest[0].transcript.messages)
    for audit in (*map(_audit, honest), offline):
        assert audit.abandoned and set(audit.scores) == {0}
        assert (
            audit.verdict is not None
            and audit.verdict.fault is Fault.SILENCE
            and not audit.verdict.proven
        )
        assert (audit.verdict.seat, audit.verdict.step) == (silent, "play")
        assert audit.penalised == ((silent,) if penalised else ())
