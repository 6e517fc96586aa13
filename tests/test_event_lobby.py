"""Event tables in the lobby (tarotd/lobby/core.py, ``Lobby.expect``): formed under the id the event
derives, by exactly the members its round plan seats, in the plan's order."""

from __future__ import annotations

import logging
import random

import msgpack
import pytest

from protocol.replication.identity import Identity
from protocol.replication.manifest import Manifest, SilenceCost
from tarotd.lobby import BROADCAST, EventSlot, FrameOut, Lobby, ReadyTable

SLOT_ID = bytes.fromhex("e7" * 16)


class Room:
    """Daemons whose one seat is their own identity, as an event's players are; frames in a
    seeded random order, in order per sender."""

    def __init__(self, count: int, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.identities = [Identity.generate() for _ in range(count)]
        self.lobbies = {
            i.public_key: Lobby(i.public_key, f"tcp://127.0.0.1:{9100 + n}", [(i, f"p{n}")])
            for n, i in enumerate(self.identities)
        }
        self.queues: dict[tuple[bytes, bytes], list[object]] = {}
        self.ready: dict[bytes, list[ReadyTable]] = {key: [] for key in self.lobbies}

    def post(self, sender: bytes, outs: list[FrameOut]) -> None:
        for destination, frame in outs:
            for target in (
                [k for k in self.lobbies if k != sender]
                if destination == BROADCAST
                else [destination]
            ):
                if target in self.lobbies:
                    wire = msgpack.unpackb(msgpack.packb(frame, use_bin_type=True), raw=False)
                    self.queues.setdefault((sender, target), []).append(wire)

    def run(self) -> None:
        while pending := [pair for pair, frames in self.queues.items() if frames]:
            sender, target = self.rng.choice(pending)
            self.post(
                target, self.lobbies[target].receive(sender, self.queues[sender, target].pop(0))
            )
        for key, lobby in self.lobbies.items():
            self.ready[key] += lobby.take_ready()

    def repeat_offers(self) -> None:
        """The heartbeat: every opener says its open offers again."""
        for key, lobby in self.lobbies.items():
            self.post(key, lobby.announcements())
        self.run()


def slot_of(keys: list[bytes], silence: SilenceCost = SilenceCost.PENALTY) -> EventSlot:
    return EventSlot(SLOT_ID, "soirée R1 T1", tuple(keys), silence)


@pytest.mark.parametrize("seed", range(6))
def test_the_plans_members_form_its_table_under_the_events_id_in_its_order(seed: int) -> None:
    room = Room(4, seed)
    keys = [i.public_key for i in room.identities]
    room.rng.shuffle(keys)
    slot = slot_of(keys)
    # the round entry reaches them in any order
    for key in sorted(keys, key=lambda _: room.rng.random()):
        room.post(key, room.lobbies[key].expect(slot))
        room.run()
    room.repeat_offers()  # the ones that heard the offer before they expected it
    for key in keys:
        (ready,) = room.ready[key]
        manifest = Manifest.from_bytes(ready.manifest)
        assert (
            manifest.table_id == SLOT_ID
            and manifest.keys == tuple(keys)
            and manifest.silence is SilenceCost.PENALTY
        )
        assert ready.first_dealer == room.ready[keys[0]][0].first_dealer


def test_a_stranger_cannot_open_under_the_slot_nor_take_a_seat_in_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    room = Room(5)
    keys = [i.public_key for i in room.identities[:4]]
    stranger = room.identities[4].public_key
    slot = slot_of(keys)
    for key in keys[2:]:
        room.post(key, room.lobbies[key].expect(slot))
    forged = {
        "t": "offer",
        "table": SLOT_ID,
        "name": slot.name,
        "seats": 4,
        "opener": stranger,
        "members": [[stranger, "intrus", stranger, "tcp://127.0.0.1:9"]],
        "state": "open",
        "nonce": bytes(16),
        "silence": "penalty",
    }
    with caplog.at_level(logging.WARNING):
        for key in keys[1:]:
            assert room.lobbies[key].receive(stranger, forged) == []
        room.post(keys[0], room.lobbies[keys[0]].expect(slot))
        room.run()
        join = {
            "t": "join",
            "table": SLOT_ID,
            "members": [[stranger, "intrus", stranger, "tcp://127.0.0.1:9"]],
        }
        # before the table is full
        room.post(keys[0], room.lobbies[keys[0]].receive(stranger, join))
        room.post(keys[1], room.lobbies[keys[1]].expect(slot))
        room.repeat_offers()
    assert "the round plan has" in caplog.text and "does not seat it here" in caplog.text
    for key in keys:
        (ready,) = room.ready[key]
        assert Manifest.from_bytes(ready.manifest).keys == tuple(keys)
    assert room.ready[stranger] == []


def test_a_manifest_in_another_order_is_not_signed(caplog: pytest.LogCaptureFixture) -> None:
    room = Room(3)
    keys = [i.public_key for i in room.identities]
    slot = slot_of(keys)
    joiner = room.lobbies[keys[1]]
    offer = {
        "t": "offer",
        "table": SLOT_ID,
        "name": slot.name,
        "seats": 3,
        "opener": keys[0],
        "members": [],
        "state": "open",
        "nonce": bytes(16),
        "silence": "penalty",
    }
    joiner.expect(slot)
    assert joiner.receive(keys[0], offer)  # it joins
    members = [[key, f"p{n}", key, f"tcp://127.0.0.1:{9100 + n}"] for n, key in enumerate(keys)]
    members[0], members[2] = members[2], members[0]
    with caplog.at_level(logging.WARNING):
        signed = joiner.receive(
            keys[0], {"t": "manifest", "table": SLOT_ID, "members": members, "silence": "penalty"}
        )
    assert signed == [] and "does not seat the members of the event's round plan" in caplog.text


def test_an_offer_of_a_fellow_player_before_its_round_is_heard_is_kept_until_it_is(
    caplog: pytest.LogCaptureFixture,
) -> None:
    room = Room(3)
    keys = [i.public_key for i in room.identities]
    slot = slot_of(keys)
    for lobby in room.lobbies.values():
        lobby.fellows = frozenset(keys)
    with caplog.at_level(logging.WARNING):
        room.post(keys[0], room.lobbies[keys[0]].expect(slot))
        room.run()  # the others have not heard of the round yet
        for key in keys[1:]:
            room.post(key, room.lobbies[key].expect(slot))
        room.run()
    assert caplog.text == ""
    assert all(len(room.ready[key]) == 1 for key in keys)
