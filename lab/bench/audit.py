"""How long verifying one whole deal transcript offline takes: ``audit_ms`` of ``tarot bench``.

The transcripts are whole five-seat deals played by ``tarot sim`` from the benchmark's seed
(so every run audits the same deals), and each is audited as ``tarot audit FILE`` does: read
the file (every signature and the hash chain checked), then
:func:`~protocol.replication.audit.audit_deal` (every deck step replayed from the revealed seeds,
every play against the full hands, the signed scores).  Every daemon runs the same audit at the end
of every deal, so this figure is also part of ``full_deal_ms``.
"""

from __future__ import annotations

import time

from client.simulation import play_one_deal, sim_table
from lab.bench.deck import BENCH_SEED
from lab.bench.stats import BenchError
from protocol.replication.audit import audit_deal, dealer_of
from protocol.replication.public import TableSetup
from protocol.replication.transcript import Transcript

PLAYERS = 5


def bench_transcripts(count: int) -> list[bytes]:
    """``count`` transcripts of seeded deals that were played to the end: a deal everyone
    passed is skipped, its audit having no play to check."""
    table, identities = sim_table(PLAYERS, BENCH_SEED)
    transcripts: list[bytes] = []
    number = 0
    while len(transcripts) < count:
        machines = play_one_deal(table, identities, number, number % PLAYERS, BENCH_SEED, ["basic"])
        audit = machines[0].audit
        if audit is None or not audit.ok:
            raise BenchError(f"the simulated deal {number} did not end with a clean audit: {audit}")
        if audit.outcome is not None:
            transcripts.append(machines[0].transcript.to_bytes())
        number += 1
    return transcripts


def audit_once(data: bytes) -> tuple[float, float]:
    """Milliseconds (wall, and the process's CPU) to read and audit one transcript file's
    bytes, as ``tarot audit`` does."""
    start, cpu = time.perf_counter(), time.process_time()
    transcript = Transcript.from_bytes(data)
    table = TableSetup(transcript.table_id, transcript.members, transcript.names)
    audit = audit_deal(table, transcript.deal, dealer_of(transcript.messages), transcript.messages)
    elapsed = (time.perf_counter() - start) * 1000
    spent = (time.process_time() - cpu) * 1000
    if not audit.ok:
        raise BenchError(f"the audit of a clean benchmark deal failed: {audit.verdict}")
    return elapsed, spent


def audit_ms(transcripts: int, runs: int) -> list[float]:
    """``runs`` audits of each of ``transcripts`` seeded deals, in milliseconds."""
    return [wall for wall, _ in audit_times(transcripts, runs)]


def audit_times(transcripts: int, runs: int) -> list[tuple[float, float]]:
    """:func:`audit_ms`'s audits, each by wall clock and in the process's CPU."""
    return [audit_once(data) for data in bench_transcripts(transcripts) for _ in range(runs)]
