"""The public deal's transition table (:mod:`protocol.replication.public`): every stage and
every move in it, and a move it does not list refused — never silently taken."""

from __future__ import annotations

import itertools

import pytest

from protocol.replication.identity import Identity
from protocol.replication.messages import Kind, Message, sign_message
from protocol.replication.payloads import has_payload
from protocol.replication.public import (
    MOVES,
    REFUSED,
    TRANSITIONS,
    Cause,
    PublicDeal,
    Stage,
    TableSetup,
    TransitionError,
)
from protocol.replication.transcript import genesis

PLAYERS = 3
IDENTITIES = [Identity.generate() for _ in range(PLAYERS)]
TABLE = TableSetup(
    b"h4-table".ljust(16, b"\0"), tuple(i.public_key for i in IDENTITIES), ("a", "b", "c")
)


def _signed(kind: Kind, seat: int, payload: dict[str, object]) -> Message:
    head = genesis(TABLE.table_id, 0, TABLE.members)
    return sign_message(IDENTITIES[seat], TABLE.table_id, 0, kind, seat, payload, head)  # type: ignore[arg-type]


def test_every_stage_and_cause_is_a_transition_or_a_refusal() -> None:
    pairs = set(itertools.product(Stage, Cause))
    assert set(TRANSITIONS) | REFUSED == pairs
    assert not set(TRANSITIONS) & REFUSED


def test_every_stage_lists_its_moves_and_every_kind_a_deal_uses_has_a_stage() -> None:
    assert set(MOVES) == set(Stage)
    used = {kind for kind in Kind if has_payload(kind)}
    assert set().union(*MOVES.values()) == used


def test_a_refused_transition_raises_naming_the_stage_and_the_cause() -> None:
    deal = PublicDeal(TABLE, 0, 0)
    with pytest.raises(TransitionError, match="commit stage on signed") as raised:
        deal._advance(Cause.SIGNED)
    assert (raised.value.stage, raised.value.cause) == (Stage.COMMIT, Cause.SIGNED)
    assert deal.stage is Stage.COMMIT


def test_a_score_signature_at_the_commit_stage_stops_the_deal_naming_its_signer() -> None:
    """Taken silently before: the signature was recorded and the deal went on."""
    deal = PublicDeal(TABLE, 0, 0)
    message = _signed(Kind.SCORE_SIGN, 1, {"scores": [0, 0, 0]})
    deal.apply(message)
    assert deal.verdict is not None
    assert deal.verdict.seat == 1
    assert deal.verdict.reason == "sent a score_sign message at the commit stage"
    assert deal.verdict.evidence == (message.digest.hex(),)
    assert deal.signatures == {}
    assert deal.stage is Stage.REVEAL
