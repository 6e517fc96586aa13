"""A seat's view as JSON for the local API: what the client draws, and nothing more.

Built from :class:`~protocol.rules.view.SeatView`, which holds only what the seat may know; this
module only changes its shape (card codes, names, seat numbers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.localapi import SeatDocument
from protocol.replication.audit import DealAudit
from protocol.replication.identity import fingerprint
from protocol.replication.machine import SeatMachine
from protocol.rules import rules
from protocol.rules.cards import codes
from protocol.rules.deal import Bid, Call, Phase
from protocol.rules.scoring import (
    CONTRACT_BONUS,
    PETIT_AU_BOUT_BONUS,
    Camp,
    points_to_make,
    score_deal,
)
from protocol.rules.view import SeatView

if TYPE_CHECKING:  # the runner builds its results with deal_breakdown: no import cycle
    from tarotd.runner import TableRunner


def view_json(view: SeatView) -> dict[str, Any]:
    return {
        "seat": view.seat,
        "players": view.players,
        "dealer": view.dealer,
        "phase": view.phase.value,
        "to_act": view.to_act,
        "hand": codes(view.hand),
        "bids": [
            {"seat": b.seat, "contract": None if b.contract is None else b.contract.code}
            for b in view.bids
        ],
        "taker": view.taker,
        "contract": None if view.contract is None else view.contract.code,
        "called": None if view.called is None else view.called.code,
        "partner": view.partner,
        "chien": codes(view.chien),
        "ecart": codes(view.ecart),
        "chelem": view.chelem_announced,
        "poignees": [
            {"seat": p.seat, "cards": codes(p.cards), "size": p.size.code} for p in view.poignees
        ],
        "tricks": [
            {"leader": t.leader, "cards": codes(t.cards), "winner": t.winner} for t in view.tricks
        ],
        "current": codes(view.current),
        "leader": view.leader,
        "legal": codes(view.legal),
    }


def deal_breakdown(audit: DealAudit) -> dict[str, Any] | None:
    """A scored deal's score as a player checks it by hand, in the FFT's terms, from the
    audit's own :func:`~protocol.rules.scoring.score_deal` (``u = s·(25 + d)·m + p·10·m + s·P +
    C``): the attack's points against the target for its bouts, the difference, the multiplier, the
    petit au bout, poignée and chelem terms, the unit and its split.  The public course (bids,
    call, poignées, tricks) is given for a replay; the hidden cards — the chien (turned or
    not), the écart, every hand as dealt — only once the audit has passed (no verdict): they
    come from the seeds every seat revealed.  None when the deck could not be replayed."""
    referee, outcome = audit.referee, audit.outcome
    if referee is None:
        return None
    out: dict[str, Any] = {
        "players": referee.variant.players,
        "bids": [
            {"seat": b.seat, "contract": None if b.contract is None else b.contract.code}
            for b in referee.bids
        ],
        "called": None if referee.called is None else referee.called.code,
        "partner": referee.partner if referee.taker is not None else None,
        "poignees": [
            {"seat": p.seat, "cards": codes(p.cards), "size": p.size.code, "points": int(p.size)}
            for p in referee.poignees
        ],
        "tricks": [
            {"leader": t.leader, "cards": codes(t.cards), "winner": t.winner}
            for t in referee.tricks
        ],
        "score": None,
    }
    if outcome is not None:
        score = score_deal(outcome)
        s, m = (1 if score.won else -1), outcome.contract.multiplier
        petit = {Camp.ATTACK: 1, Camp.DEFENCE: -1, None: 0}[outcome.petit_au_bout]
        contract_points = s * (CONTRACT_BONUS + score.difference) * m
        petit_points = petit * PETIT_AU_BOUT_BONUS * m
        poignee_points = s * sum(int(size) for _, size in outcome.poignees)
        out["score"] = {
            "attack_half_points": outcome.attack_half_points,  #: 40.5 points are 81
            "bouts": outcome.bouts,
            "needed": points_to_make(outcome.bouts),
            "won": score.won,
            "difference": score.difference,  #: whole points, the odd half to the winning camp
            "multiplier": m,
            "contract_points": contract_points,  #: ±(25 + difference) × multiplier
            "petit_au_bout": None if outcome.petit_au_bout is None else outcome.petit_au_bout.value,
            "petit_au_bout_points": petit_points,  #: ±10 × multiplier, to the camp that took it
            "poignee_points": poignee_points,  #: never multiplied, to the deal's winner
            "chelem": None if outcome.chelem is None else outcome.chelem.value,
            "chelem_announced": outcome.chelem_announced,
            "chelem_points": score.unit - contract_points - petit_points - poignee_points,
            "unit": score.unit,
            "taker": score.taker,
            "partner": score.partner,
            "defender": score.defender,  #: each defender's
        }
    if audit.ok:
        out["chien"] = codes(referee.chien or ())
        out["ecart"] = codes(referee.ecart)
        out["hands"] = [codes(hand or ()) for hand in referee.dealt]
    return out


def decision_options(machine: SeatMachine) -> dict[str, Any] | None:
    """What the seat may choose now, so that a client offers only legal choices: the bids
    above the highest, the callable cards, the cards the écart may take (and how many
    trumps it must), the cards to play and, before the first card, the poignées."""
    game, phase = machine.game, machine.decision()
    if game is None or phase is None:
        return None
    seat = machine.seat
    if phase is Phase.BIDDING:
        bids = [a.contract for a in game.legal_actions() if isinstance(a, Bid)]
        return {"bids": ["pass" if c is None else c.code for c in bids]}
    if phase is Phase.CALL:
        return {"calls": [a.card.code for a in game.legal_actions() if isinstance(a, Call)]}
    if phase is Phase.ECART:
        allowed, trumps = game.ecart_candidates()
        return {
            "ecart": {
                "allowed": codes(allowed),
                "size": game.variant.chien_size,
                "trumps_needed": trumps,
            }
        }
    if phase is Phase.CHELEM:
        return {"chelem": [False, True]}
    hand, ecart = game.hand(seat), game.poignee_ecart(seat)
    poignee = None
    if game.poignee_allowed(seat):
        sizes = rules.poignee_sizes_available(hand, game.variant, ecart)
        poignee = {
            "sizes": {size.code: game.variant.threshold(size) for size in sizes},
            "trumps": codes(rules.poignee_trumps(hand, ecart)),
            "ecart": codes(c for c in ecart if c.is_trump),
        }
    return {"cards": codes(game.legal_cards(seat)), "poignee": poignee}


def seat_state(
    runner: TableRunner, key: bytes, away: dict[int, float] | None = None
) -> SeatDocument:
    """Everything the client of the seat with identity ``key`` needs to redraw its screen.
    ``away``: seats whose daemon is unreachable, with the seconds since it was last heard."""
    seat = next((s for s, m in enumerate(runner.ready.members) if m.key == key), None)
    machine = runner.machines.get(seat) if seat is not None else None
    view = machine.view() if machine is not None else None
    last = runner.last_views.get(seat) if seat is not None and machine is None else None
    decision = machine.decision() if machine is not None else None
    return {
        "table": runner.table_id.hex(),
        "name": runner.ready.name,
        "seats": list(runner.ready.setup.names),
        "fingerprints": [fingerprint(m.key) for m in runner.ready.members],
        "bots": [m.bot for m in runner.ready.members],  #: each seat's bot level, "" a person
        "seat": seat,
        "deal": runner.deal_number,
        "dealer": runner.dealer,
        "view": None if view is None else view_json(view),
        "last_view": None
        if last is None
        else view_json(last),  #: between deals: how the last one ended
        "waiting_for": sorted(runner.waiting_for()),
        "away": [{"seat": s, "seconds": round(t, 1)} for s, t in sorted((away or {}).items())],
        "decision": None if decision is None else decision.value,
        "options": None if machine is None else decision_options(machine),
        "between_deals": runner.between_deals,
        "finished": runner.finished,
        "scores": runner.sheet.totals(),
        "results": runner.results,
    }


def earlier_state(
    runners: list[TableRunner], runner: TableRunner, key: bytes
) -> SeatDocument | None:
    """The seat's state at the finished table played before ``runner`` (of ``runners``, in
    the order they started: an event's round just over), for a client that did not see it
    end — started since, or on the lobby — to show its last deal and replay it."""
    before = runners[: runners.index(runner)]
    done = next((r for r in reversed(before) if r.finished and r.results), None)
    return None if done is None or runner.finished else seat_state(done, key)


def scores_document(runner: TableRunner) -> dict[str, Any]:
    """The table's score sheet, as ``tarot scores --json`` prints it."""
    return {
        "table": runner.ready.name or runner.table_id.hex(),
        "table_id": runner.table_id.hex(),
        "seats": list(runner.ready.setup.names),
        "deals": runner.results,
        "totals": runner.sheet.totals(),
    }
