"""``tarot audit FILE``: check a saved deal transcript offline, on any machine.

Exit status 0 when everything holds, 1 with the verdict otherwise, 2 for a file that cannot
be read as a transcript.  A proof file (:func:`~protocol.replication.transcript.proof_file`) is a
transcript with the verdict a seat reached: exit 1 when the audit gives that very verdict
(the proof holds — or, for a silence, the record is exact but the verdict is "unproven: reported
silent by seats X, Y", the others' word), 2 when it does not.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from client.cli import SubParsers
from client.event_cmd import audit_event, is_event_file
from protocol.replication.audit import DealAudit, audit_transcript
from protocol.replication.identity import fingerprint
from protocol.replication.manifest import ManifestError
from protocol.replication.public import TableSetup
from protocol.replication.transcript import (
    OtherVersionError,
    Transcript,
    TranscriptError,
    is_proof_file,
    read_proof_file,
)
from protocol.replication.verdict import Fault
from protocol.rules.scoring import RENONCE_PENALTY


def register(subparsers: SubParsers) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="verify a saved deal transcript, proof file or event record offline",
        description="Re-check every signature, the hash chain, every step of the deck and every "
        "play of a saved deal, and the score every seat signed.  A proof file (written by a seat "
        "that named a cheater) is checked the same way, and must give the verdict it states.",
    )
    parser.add_argument("file", type=Path, metavar="FILE")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        data = args.file.read_bytes()
        if is_event_file(data):  # an event's record (tarot event export --record)
            return audit_event(data)
        stated, transcript, manifest = (
            read_proof_file(data)
            if is_proof_file(data)
            else (None, Transcript.from_bytes(data), None)
        )
        table, dealer, audit = audit_transcript(transcript, manifest)
    # a proof file's transcript against the manifest its members signed
    except ManifestError as error:
        print(f"proof: DOES NOT HOLD — {error}")
        return 2
    except OtherVersionError as error:  # read, but of a protocol this build does not audit
        print(f"tarot audit: {args.file}: {error}", file=sys.stderr)
        return 2
    except (OSError, TranscriptError, ValueError) as error:
        print(f"tarot audit: cannot read {args.file}: {error}", file=sys.stderr)
        return 2
    for line in report(table, transcript, dealer, audit, signed=manifest is not None):
        print(line)
    if stated is None:
        return 0 if audit.ok else 1
    found = audit.verdict
    if found is None or (found.seat, found.step, found.reason) != (
        stated.seat,
        stated.step,
        stated.reason,
    ):
        print(
            f"proof: DOES NOT HOLD — the file states {stated}, the audit gives "
            f"{found or 'no verdict'}"
        )
        return 2
    if found.fault is Fault.SILENCE:
        reporters = ", ".join(str(seat) for seat in audit.reporters(table.players))
        print(
            "proof: unproven — the record is the file's and gives the silence it states, but a "
            "silence is reported "
            f"silent by seats {reporters}, their word: nothing the silent seat signed proves a "
            "deviation"
        )
        return 1
    print("proof: holds — the audit gives the verdict the file states")
    return 1


def report(
    table: TableSetup, transcript: Transcript, dealer: int, audit: DealAudit, *, signed: bool
) -> list[str]:
    """What ``tarot audit`` prints; ``signed``: the names and rules come from the manifest
    every member signed (a proof file), not from the transcript's unsigned labels."""
    origin = (
        "as every member signed them in the manifest"
        if signed
        else "unsigned (a transcript file carries no manifest)"
    )
    lines = [
        f"table {table.table_id.hex()}, deal {transcript.deal}, dealer seat {dealer}, "
        f"{len(transcript.messages)} signed messages, chain and signatures ok",
        f"names and rules: {origin}; silence before the reveal costs {table.silence.value}",
    ]
    for seat, (name, key) in enumerate(zip(table.names, table.members)):
        lines.append(f"  seat {seat}: {name} [{fingerprint(key)}]")
    referee = audit.referee
    if referee is not None and referee.contract is not None and referee.taker is not None:
        partner = "" if referee.partner is None else f", partner seat {referee.partner}"
        called = "" if referee.called is None else f", called {referee.called.code}"
        lines.append(f"contract: {referee.contract.code} by seat {referee.taker}{called}{partner}")
    elif audit.void and referee is not None:
        lines.append(f"void deal: {referee.void_reason}")
    lines.append("scores: " + " ".join(f"{s:+d}" for s in audit.scores))
    for penalty in audit.penalties:
        lines.append(
            f"penalty: {RENONCE_PENALTY} points against seat {penalty.seat} ({penalty.step}: "
            f"{penalty.reason})"
        )
    verdict = audit.verdict
    if verdict is None:
        lines.append("audit: ok")
    else:
        who = "not attributed"
        if verdict.seat is not None:
            seat_key = fingerprint(table.members[verdict.seat])
            who = f"seat {verdict.seat} ({table.names[verdict.seat]} [{seat_key}])"
        if verdict.fault is Fault.SILENCE:
            reporters = ", ".join(str(seat) for seat in audit.reporters(table.players))
            lines.append(
                f"audit: SILENT — {who}, step {verdict.step}: {verdict.reason} — unproven: "
                "reported silent by "
                f"seats {reporters} (their word, not a message of its own: no deviation is proven)"
            )
        else:
            lines.append(f"audit: CHEAT — {who}, step {verdict.step}: {verdict.reason}")
        for evidence in verdict.evidence:
            lines.append(f"  evidence: {evidence}")
    return lines
