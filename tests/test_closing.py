"""A closing chain is a certificate: the seat that follows it ends the deal on the others' row,
and a closing that is not one — cut short, tampered, reordered, of another deal, or made by a
minority — is refused whole (:meth:`SeatMachine.follow`, issue 35 item 1).

Four seats in one process (``test_deal_tamper.Table``); :data:`ALONE` is cut off at a step of
the deal — a deck step, the bidding, the play — for longer than the others' timeout.  The three
others close the deal without it; it then follows their chain, whatever it had done meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from test_agreement import ALONE, Cut
from test_deal_tamper import PLAYERS, Table

from protocol.replication.machine import SeatMachine
from protocol.replication.messages import Kind, Message, decode, encode, sign_message
from protocol.replication.public import Stage


def follower(table: Table, closing: list[Message], seat: int = ALONE) -> SeatMachine | None:
    """``seat``'s machine following ``closing``, from its own seed."""
    machine = table.machines[seat]
    return SeatMachine.follow(
        table.table,
        machine.public.deal_number,
        machine.public.dealer,
        seat,
        table.identities[seat],
        machine.seed,
        closing,
    )


def waiting_for_alone(stage: Stage) -> Callable[[Table], bool]:
    def reached(table: Table) -> bool:
        machine = table.machines[0]
        return machine.public.stage is stage and ALONE in machine.waiting_for()

    return reached


#: Where the cut falls: every step at which the others can wait for the seat cut off.
STAGES = [Stage.SHUFFLE, Stage.LOCK, Stage.DEAL_KEYS, Stage.BIDDING, Stage.PLAY]


def closed_without_alone(stage: Stage) -> tuple[Table, list[Message]]:
    """A table whose three other seats closed the deal without :data:`ALONE`, cut off when
    the deal waited for it at ``stage``; and their closing chain."""
    table = Table()
    reached = waiting_for_alone(stage)
    table.run_until(lambda: reached(table) or any(m.done for m in table.machines))
    if not reached(table):
        pytest.skip(f"this deal never waits for seat {ALONE} at {stage.value}")
    cut = Cut(table)
    cut.time_out(cut.answering)
    cut.time_out([cut.alone])  # its own clock runs out too, alone: it must not settle
    assert all(m.done for m in cut.answering), [(m.seat, m.public.stage) for m in cut.answering]
    assert not cut.alone.done
    return table, list(cut.answering[0].transcript.messages)


@pytest.mark.parametrize("stage", STAGES, ids=[s.value for s in STAGES])
def test_the_seat_cut_off_at_any_step_follows_the_others_closing(stage: Stage) -> None:
    table, closing = closed_without_alone(stage)
    machine = follower(table, closing)
    assert machine is not None and machine.done
    witness = table.machines[0]
    assert machine.transcript.head == witness.transcript.head
    assert machine.public.stalled == (ALONE,)
    assert machine.audit is not None and witness.audit is not None
    row = (machine.audit.scores, machine.audit.penalised, machine.audit.verdict)
    assert row == (witness.audit.scores, witness.audit.penalised, witness.audit.verdict)


def test_a_closing_served_twice_gives_the_same_row() -> None:
    """Following is deterministic: every member that adopts one closing ends on one row."""
    table, closing = closed_without_alone(Stage.PLAY)
    first, second = follower(table, closing), follower(table, closing)
    assert first is not None and second is not None
    assert first.audit == second.audit and first.transcript.head == second.transcript.head


def mutants(closing: list[Message]) -> dict[str, list[Message]]:
    """Ways a member could serve something that is not the closing of the deal."""
    last_sign = max(i for i, m in enumerate(closing) if m.kind is Kind.SCORE_SIGN)
    reveal = next(i for i, m in enumerate(closing) if m.kind is Kind.REVEAL)
    flipped = bytearray(encode(closing[reveal - 1]))
    flipped[-1] ^= 1
    swapped = list(closing)
    swapped[3], swapped[4] = swapped[4], swapped[3]
    return {
        "without its signatures": closing[:reveal],
        "cut before the end": closing[: len(closing) // 2],
        "a message dropped": closing[:5] + closing[6:],
        "two messages swapped": swapped,
        "one byte changed": [*closing[: reveal - 1], *_decoded(bytes(flipped)), *closing[reveal:]],
        "with a message of another table": [*closing[:last_sign], _retabled(closing[last_sign])],
        "empty": [],
    }


def _decoded(data: bytes) -> list[Message]:
    try:
        return [decode(data)]
    except ValueError:
        return []  # the gate refused it: the chain then lacks that message


def _retabled(message: Message) -> Message:
    return replace(message, table_id=bytes(16))


MUTANTS = [
    "without its signatures",
    "cut before the end",
    "a message dropped",
    "two messages swapped",
    "one byte changed",
    "with a message of another table",
    "empty",
]


@pytest.mark.parametrize("mutant", MUTANTS)
def test_a_closing_that_is_not_one_is_refused(mutant: str) -> None:
    table, closing = closed_without_alone(Stage.PLAY)
    assert set(mutants(closing)) == set(MUTANTS)
    assert follower(table, closing) is not None  # the genuine one is taken
    assert follower(table, mutants(closing)[mutant]) is None


def test_a_minority_cannot_close_a_deal_for_the_others() -> None:
    """Two seats of four without seat 0 time the other two out (as a cheating pair would,
    ignoring the quorum) and sign a chain of their own: seat 0 refuses to follow it."""
    table = Table()
    table.run_until(lambda: table.machines[0].public.stage is Stage.PLAY)
    pair = [table.machines[2], table.machines[3]]
    queue: list[Message] = []
    for machine in pair:  # they stall 0 and 1 by hand, past the quorum rule
        machine.public.stall({0, 1})
        machine._sync()
        queue += machine._flush()
    while queue:
        message = queue.pop(0)
        for machine in pair:
            if machine.seat != message.seat:
                queue += machine.receive(message)
    chain = list(pair[0].transcript.messages)
    assert any(m.kind is Kind.SCORE_SIGN for m in chain), "the pair did not sign a chain"
    assert follower(table, chain, seat=0) is None
    assert follower(table, chain, seat=1) is None


def test_a_closing_signed_by_an_impostor_is_refused() -> None:
    """A score signature in the closing re-signed by another member's key: refused."""
    table, closing = closed_without_alone(Stage.PLAY)
    index = max(i for i, m in enumerate(closing) if m.kind is Kind.SCORE_SIGN)
    real = closing[index]
    impostor = (real.seat + 1) % PLAYERS
    forged = sign_message(
        table.identities[impostor],
        real.table_id,
        real.deal,
        real.kind,
        real.seat,
        real.payload,
        real.prev,
    )
    assert follower(table, [*closing[:index], forged, *closing[index + 1 :]]) is None
