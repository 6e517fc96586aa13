"""What the local API shows of the events held here: the documents the client and the CLI read
(``docs/local-api.md``, ``event`` and ``events``).  Names, fingerprints and counts only: the
record itself is for ``event-record``."""

from __future__ import annotations

from typing import Any

from protocol.event.event import EventReport
from protocol.event.ranking import RoundResult
from protocol.replication.identity import fingerprint
from tarotd.event_book import EventBook, Held
from tarotd.event_member import Seating


def summary(held: Held, seating: Seating | None, key: bytes) -> dict[str, Any]:
    """The event as the client shows it: config, players, each round's tables, the live
    ranking, the rows still awaited, where our player (``key``) sits."""
    config, report = held.config, held.report
    names = report.names
    return {
        "event": held.event_id.hex(),
        "name": config.name,
        "role": held.role.value,
        "organiser": fingerprint(config.organiser),
        "rounds": config.rounds,
        "deals": config.deals,
        "tables": config.table_size,
        "movement": config.movement.value,
        "silence": config.silence.value,
        "players": [{"name": name, "fingerprint": fingerprint(key)} for key, name in names.items()],
        "plans": [
            {
                "round": plan.round,
                "movement": plan.movement.value,
                "tables": [
                    [names.get(key, fingerprint(key)) for key in table] for table in plan.tables
                ],
            }
            for plan in report.plans
        ],
        "closed": report.closed,
        "open": held.open_round,
        "pending": [list(slot) for slot in report.pending],
        "ranking": [
            {
                "place": s.place,
                "name": names.get(s.player, fingerprint(s.player)),
                "fingerprint": fingerprint(s.player),
                "total": s.total,
                "rounds": [[r.points, r.mark.value, _rows_in(report, r)] for r in s.rounds],
            }
            for s in report.live
        ],
        "seat": None
        if seating is None
        else {
            "round": seating.round,
            "table": seating.table,
            "seat": seating.seat,
            "with": [names.get(k, fingerprint(k)) for k in seating.slot.keys if k != key],
        },
        "findings": [str(finding) for finding in report.findings],
        "entries": len(held.record.entries),
    }


def listing(book: EventBook) -> list[dict[str, Any]]:
    """Every event held here, in the order this daemon took them up (tonight's last), then
    those heard on the LAN; ``open`` is the round being played, if one is."""
    rows: list[dict[str, Any]] = [
        {
            "event": e.hex(),
            "name": h.config.name,
            "role": h.role.value,
            "organiser": fingerprint(h.config.organiser),
            "players": len(h.report.names),
            "closed": h.report.closed,
            "rounds": h.config.rounds,
            "open": h.open_round,
        }
        for e, h in book.held.items()
    ]
    rows += [
        {
            "event": e.hex(),
            "name": h.config.name,
            "role": None,
            "organiser": fingerprint(h.config.organiser),
            "players": None,
            "closed": None,
            "rounds": h.config.rounds,
            "open": None,
        }
        for e, h in book.heard.items()
        if e not in book.held
    ]
    return rows


def _rows_in(report: EventReport, result: RoundResult) -> int:
    """The rows in of the table ``result`` sat at: how far a round in progress has gone."""
    return 0 if result.table is None else len(report.results.get((result.round, result.table), ()))
