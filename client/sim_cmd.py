"""``tarot sim``: whole deals between bots through the real protocol, in one process."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from client.cli import SubParsers, UsageError
from client.simulation import Cheat, simulate
from protocol.bots.bots import BOTS
from protocol.plugins import cheat_lab, not_installed
from protocol.replication.verdict import Fault
from protocol.rules.scoring import RENONCE_PENALTY


def register(subparsers: SubParsers) -> None:
    parser = subparsers.add_parser(
        "sim",
        help="play whole deals between bots through the real protocol",
        description="Play whole deals between bots: every seat its own state machine, every "
        "message "
        "signed, encoded and checked, every deal audited.  Deterministic for a seed.",
    )
    parser.add_argument("--players", type=int, choices=(3, 4, 5), default=5)
    parser.add_argument("--deals", type=_positive, default=1, metavar="N")
    parser.add_argument("--seed", type=int, default=0, metavar="S")
    parser.add_argument(
        "--bots",
        default="basic",
        metavar="LIST",
        help=f"bot level per seat, comma-separated, repeated around the table ({', '.join(BOTS)})",
    )
    lab = cheat_lab()  # the cheat lab's kinds, for --cheat's help
    kinds = ", ".join(lab.kinds) if lab is not None else "the cheat lab is not installed"
    parser.add_argument("--cheat", metavar="SEAT:KIND", help=f"one seat cheats ({kinds})")
    parser.add_argument(
        "--transcripts", type=Path, metavar="DIR", help="save each deal's transcript there"
    )
    parser.add_argument(
        "--proofs",
        type=Path,
        metavar="DIR",
        help="every honest seat that names a cheater writes its proof file there",
    )
    parser.add_argument(
        "--json", action="store_true", help="one JSON object per deal, then a summary"
    )
    parser.set_defaults(run=run)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("at least 1")
    return value


def parse_bots(text: str, players: int) -> list[str]:
    """Levels by seat; a shorter list repeats around the table (``random,basic`` alternates)."""
    levels = [level.strip() for level in text.split(",") if level.strip()]
    if not levels or len(levels) > players:
        raise UsageError(f"--bots: give 1 to {players} levels, comma-separated")
    levels = [levels[seat % len(levels)] for seat in range(players)]
    for level in levels:
        if level not in BOTS:
            raise UsageError(f"--bots: unknown level {level!r}: use {', '.join(BOTS)}")
    return levels


def parse_cheat(text: str | None, players: int) -> Cheat | None:
    if text is None:
        return None
    lab = cheat_lab()
    if lab is None:
        raise UsageError(f"--cheat: {not_installed('the cheat lab')}")
    seat, _, kind = text.partition(":")
    if not seat.isdigit() or int(seat) >= players:
        raise UsageError(f"--cheat: SEAT is a seat number 0..{players - 1}, as in 2:revoke")
    if kind not in lab.kinds:
        raise UsageError(f"--cheat: unknown kind {kind!r}: use {', '.join(lab.kinds)}")
    return Cheat(int(seat), kind)


def run(args: argparse.Namespace) -> int:
    bots = parse_bots(args.bots, args.players)
    cheat = parse_cheat(args.cheat, args.players)
    reports = []
    sheets = []  # the sheet after each deal: the last one totals the game
    for report, sheet in simulate(
        args.players, args.deals, args.seed, bots, cheat, args.transcripts, args.proofs
    ):
        reports.append(report)
        sheets.append(sheet)
        if args.json:
            print(json.dumps(report, ensure_ascii=False), flush=True)
        else:
            print(_line(report))
    totals = sheets[-1].totals()
    summary = {
        "summary": True,
        "deals": len(reports),
        "audits_ok": sum(1 for r in reports if r["audit"] == "ok"),
        "void": sum(1 for r in reports if r["contract"] is None),
        "totals": totals,
        "median_ms": sorted(_ms(r) for r in reports)[len(reports) // 2],
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print(
            f"{summary['deals']} donnes, {summary['audits_ok']} audits ok; totaux : "
            f"{' '.join(f'{t:+d}' for t in totals)}"
        )
    return 0


def _ms(report: dict[str, object]) -> float:
    ms = report["ms"]
    assert isinstance(ms, float), "simulation.deal_report rounds the deal's time to a float"
    return ms


def _line(report: dict[str, object]) -> str:
    row = report["scores"]
    assert isinstance(row, list), "simulation.deal_report lists the deal's row"
    scores = " ".join(f"{s:+d}" for s in row)
    audit = f"{_audit(report['audit'])}{_penalties(report['penalties'])}"
    if report["contract"] is None:
        return f"donne {report['deal']}: nulle ({report['void'] or 'abandonnée'}) — audit {audit}"
    return (
        f"donne {report['deal']}: seat {report['taker']} {report['contract']}, "
        f"{report['points']} points, {report['bouts']} bouts — {scores} — audit {audit}"
    )


def _audit(verdict: object) -> str:
    """The verdict: a silence is said as one, never as cheating
    (``protocol/replication/verdict.py``)."""
    if verdict == "ok":
        return "ok"
    silent = isinstance(verdict, dict) and verdict.get("fault") == Fault.SILENCE.value
    return f"{'SILENCE' if silent else 'TRICHE'} : {verdict}"


def _penalties(seats: object) -> str:
    """Who takes a penalty row in the deal, as the sheet charges it."""
    assert isinstance(seats, list), "simulation.deal_report lists the penalised seats"
    if not seats:
        return ""
    return f" — pénalité de {RENONCE_PENALTY} points : seat {', '.join(map(str, seats))}"
