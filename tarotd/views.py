"""A seat's view as JSON for the local API: what the client draws, and nothing more.

Built from :class:`~protocol.view.SeatView`, which holds only what the seat may know; this
module only changes its shape (card codes, names, seat numbers).
"""

from __future__ import annotations

from typing import Any

from protocol.cards import codes
from protocol.view import SeatView
from tarotd.runner import TableRunner


def view_json(view: SeatView) -> dict[str, Any]:
    return {
        "seat": view.seat,
        "players": view.players,
        "dealer": view.dealer,
        "phase": view.phase.value,
        "to_act": view.to_act,
        "hand": codes(view.hand),
        "bids": [{"seat": b.seat, "contract": None if b.contract is None else b.contract.code} for b in view.bids],
        "taker": view.taker,
        "contract": None if view.contract is None else view.contract.code,
        "called": None if view.called is None else view.called.code,
        "partner": view.partner,
        "chien": codes(view.chien),
        "ecart": codes(view.ecart),
        "chelem": view.chelem_announced,
        "poignees": [{"seat": p.seat, "cards": codes(p.cards), "size": p.size.code} for p in view.poignees],
        "tricks": [{"leader": t.leader, "cards": codes(t.cards), "winner": t.winner} for t in view.tricks],
        "current": codes(view.current),
        "leader": view.leader,
        "legal": codes(view.legal),
    }


def seat_state(runner: TableRunner, key: bytes) -> dict[str, Any]:
    """Everything the client of the seat with identity ``key`` needs to redraw its screen."""
    seat = next((s for s, m in enumerate(runner.ready.members) if m.key == key), None)
    machine = runner.machines.get(seat) if seat is not None else None
    view = machine.view() if machine is not None else None
    decision = machine.decision() if machine is not None else None
    return {
        "table": runner.table_id.hex(),
        "seats": list(runner.ready.setup.names),
        "seat": seat,
        "deal": runner.deal_number,
        "view": None if view is None else view_json(view),
        "waiting_for": sorted(runner.waiting_for()),
        "decision": None if decision is None else decision.value,
        "scores": runner.sheet.totals(),
        "results": runner.results,
    }


def scores_document(runner: TableRunner) -> dict[str, Any]:
    """The table's score sheet, as ``tarot scores --json`` prints it."""
    return {
        "table": runner.ready.name or runner.table_id.hex(),
        "table_id": runner.table_id.hex(),
        "seats": list(runner.ready.setup.names),
        "deals": runner.results,
        "totals": runner.sheet.totals(),
    }
