"""The one codec of the payloads of a deal (protocol/replication/payloads.py): every payload of real
deals decodes to its typed class and encodes back to the same wire value, and a payload that is not
one of its kind is refused with the rule it breaks."""

from __future__ import annotations

import pytest

from client.simulation import play_one_deal, sim_table
from protocol.replication.identity import Identity
from protocol.replication.messages import Kind, Message, sign_message
from protocol.replication.payloads import (
    UNUSED_KIND,
    BidPayload,
    ChelemPayload,
    HandCheckPayload,
    HandStatus,
    PayloadError,
    decode_payload,
    encode_payload,
    timed_out_in,
)
from protocol.rules.variants import Contract


@pytest.mark.parametrize("players", [3, 5])
def test_every_payload_of_a_deal_decodes_and_encodes_back_to_its_wire_value(players: int) -> None:
    table, identities = sim_table(players, seed=players)
    machines = play_one_deal(table, identities, 0, 1, players, ["basic"] * players)
    messages = machines[0].transcript.messages
    assert {m.kind for m in messages} >= {
        Kind.COMMIT,
        Kind.SHUFFLE,
        Kind.BID,
        Kind.PLAY,
        Kind.REVEAL,
        Kind.SCORE_SIGN,
    }
    for message in messages:
        assert encode_payload(decode_payload(message)) == message.payload, message


def signed(kind: Kind, payload: object) -> Message:
    identity = Identity.from_private_bytes(bytes(range(32)))
    return sign_message(identity, bytes(16), 0, kind, 0, payload, bytes(32))  # type: ignore[arg-type]  # junk on purpose


def test_the_small_payloads_decode_to_their_fields() -> None:
    assert decode_payload(signed(Kind.BID, {"contract": "garde"})) == BidPayload(Contract.GARDE)
    assert decode_payload(signed(Kind.BID, {"contract": None})) == BidPayload(None)
    assert decode_payload(signed(Kind.CHELEM, {"announce": True})) == ChelemPayload(True)
    assert decode_payload(signed(Kind.PETIT_SEC, {"status": "ok"})) == HandCheckPayload(
        HandStatus.OK
    )
    bad = decode_payload(signed(Kind.PETIT_SEC, {"status": "bad-hand", "position": 17}))
    assert bad == HandCheckPayload(HandStatus.BAD, position=17)


@pytest.mark.parametrize(
    ("kind", "payload", "reason"),
    [
        (Kind.BID, [], "the payload is not a map"),
        (Kind.BID, {"contract": "grande"}, "unknown contract 'grande'"),
        (Kind.CHELEM, {"announce": 1}, "the chelem announcement is a boolean, got int 1"),
        (Kind.PETIT_SEC, {"status": "fine"}, "the hand status is one of .*, got str 'fine'"),
        (Kind.PETIT_SEC, {"status": "bad-hand", "position": True}, "position is an integer"),
        (Kind.BID, {"contract": "g" * 100}, "the contract is 0 to 32 characters, got 100"),
        (Kind.CALL, {"card": 14}, "a card is a string, got int 14"),
        (Kind.PLAY, {"open": {"kind": "reveal"}}, "malformed payload"),
        (Kind.CALL, {"card": "ZZ"}, "ZZ"),
        (Kind.ABANDON, {}, UNUSED_KIND),
    ],
)
def test_a_payload_not_of_its_kind_is_refused_with_the_rule(
    kind: Kind, payload: object, reason: str
) -> None:
    with pytest.raises(PayloadError, match=reason):
        decode_payload(signed(kind, payload))


def test_the_seats_a_reveal_names_gone_are_read_even_when_the_rest_is_bad() -> None:
    assert timed_out_in(signed(Kind.REVEAL, {"deck": "junk", "gone": [2, True, "x", 4]})) == {2, 4}
    assert timed_out_in(signed(Kind.REVEAL, {"deck": "junk"})) == set()
