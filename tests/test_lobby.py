"""Forming tables, sans IO: daemons exchanging lobby frames through an in-memory network."""

from __future__ import annotations

import random

import msgpack
import pytest

from protocol.identity import Identity
from tarotd.lobby import BROADCAST, Lobby, Out, ReadyTable


class Network:
    """Lobbies of several daemons; frames delivered in a seeded random order per run but
    in order per sender, as the mesh guarantees."""

    def __init__(self, hosted: list[int], seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.lobbies: dict[bytes, Lobby] = {}
        for index, seats in enumerate(hosted):
            daemon = Identity.generate()
            identities = [(Identity.generate(), f"d{index}-s{k}") for k in range(seats)]
            self.lobbies[daemon.public_key] = Lobby(daemon.public_key, f"tcp://127.0.0.1:{9000 + index}", identities)
        self.queues: dict[tuple[bytes, bytes], list[dict[str, object]]] = {}
        self.ready: dict[bytes, list[ReadyTable]] = {key: [] for key in self.lobbies}

    def post(self, sender: bytes, outs: list[Out]) -> None:
        for destination, frame in outs:
            targets = [k for k in self.lobbies if k != sender] if destination == BROADCAST else [destination]
            for target in targets:
                wire = msgpack.unpackb(msgpack.packb(frame, use_bin_type=True), raw=False)
                self.queues.setdefault((sender, target), []).append(wire)

    def run(self) -> None:
        for _ in range(100_000):
            pending = [pair for pair, frames in self.queues.items() if frames]
            if not pending:
                break
            sender, target = self.rng.choice(pending)
            frame = self.queues[(sender, target)].pop(0)
            self.post(target, self.lobbies[target].receive(sender, frame))
        for key, lobby in self.lobbies.items():
            self.ready[key].extend(lobby.take_ready())


@pytest.mark.parametrize("seed", range(8))
def test_daemons_wanting_one_table_name_converge_on_one_table(seed: int) -> None:
    network = Network([1, 1, 1, 1, 1], seed)
    for key, lobby in network.lobbies.items():
        network.post(key, lobby.want("club", 5))
    network.run()
    tables = {r.setup.table_id for ready in network.ready.values() for r in ready}
    assert len(tables) == 1
    setups = {(r.setup, r.first_dealer) for ready in network.ready.values() for r in ready}
    assert len(setups) == 1  # same members, same seat order, same first dealer everywhere
    assert all(len(ready) == 1 for ready in network.ready.values())


def test_a_daemon_hosting_bots_fills_several_seats() -> None:
    network = Network([3, 1, 1], seed=3)  # one player with two bots, and two players
    keys = list(network.lobbies)
    network.post(keys[0], network.lobbies[keys[0]].open("soirée", 5))
    network.run()
    offer = next(iter(network.lobbies[keys[1]].offers.values()))
    for key in keys[1:]:
        network.post(key, network.lobbies[key].join(offer.table_id))
    network.run()
    ready = [r for rs in network.ready.values() for r in rs]
    assert len(ready) == 3 and len({r.setup for r in ready}) == 1
    assert ready[0].setup.players == 5


def test_two_tables_form_side_by_side() -> None:
    network = Network([1] * 8, seed=5)
    keys = list(network.lobbies)
    for key in keys[:5]:
        network.post(key, network.lobbies[key].want("five", 5))
    for key in keys[5:]:
        network.post(key, network.lobbies[key].want("three", 3))
    network.run()
    names = sorted(len(r.setup.members) for rs in network.ready.values() for r in rs[:1])
    assert names == [3, 3, 3, 5, 5, 5, 5, 5]


def test_malformed_frames_change_nothing() -> None:
    network = Network([1, 1, 1], seed=1)
    key = next(iter(network.lobbies))
    lobby = network.lobbies[key]
    garbage: list[object] = [None, 3, "x", {}, {"t": "offer"}, {"t": "join", "table": b"short"},
                             {"t": "sign", "table": b"x" * 16, "key": 5}, {"t": "coin", "table": [], "key": b""},
                             {"t": "offer", "table": b"x" * 16, "name": "n" * 500, "seats": 5, "opener": key, "members": [], "state": "open"}]
    for frame in garbage:
        assert lobby.receive(b"\x01" * 32, frame) == []
    assert lobby.offers == {} and lobby._early == {}


def test_leaving_before_the_table_starts_frees_the_seat() -> None:
    network = Network([1, 1, 1], seed=2)
    keys = list(network.lobbies)
    network.post(keys[0], network.lobbies[keys[0]].open("club", 3))
    network.run()
    table_id = next(iter(network.lobbies[keys[1]].offers))
    network.post(keys[1], network.lobbies[keys[1]].join(table_id))
    network.run()
    assert len(network.lobbies[keys[0]].offers[table_id].members) == 2
    network.post(keys[1], network.lobbies[keys[1]].leave())
    network.run()
    assert len(network.lobbies[keys[0]].offers[table_id].members) == 1
    assert len(network.lobbies[keys[2]].offers[table_id].members) == 1  # the new offer went out
    network.post(keys[2], network.lobbies[keys[2]].join(table_id))
    network.run()
    assert not any(network.ready.values())  # two of three seats: not full


def test_switching_to_a_smaller_offer_leaves_the_other_one() -> None:
    for seed in range(6):
        network = Network([1, 1, 1, 1], seed)
        for key, lobby in network.lobbies.items():
            network.post(key, lobby.want("club", 4))
        network.run()
        for lobby in network.lobbies.values():
            for offer in lobby.offers.values():
                if offer.opener == lobby.daemon_key:
                    seats = [m.key for m in offer.members]
                    assert len(seats) == len(set(seats))
        ready = {r.setup.table_id for rs in network.ready.values() for r in rs}
        assert len(ready) == 1

def test_lobby_ignores_an_offer_with_infinitely_many_seats() -> None:
    me, stranger = Identity.generate(), Identity.generate()
    lobby = Lobby(me.public_key, "tcp://127.0.0.1:1", [(me, "moi")])
    frame = {"t": "offer", "table": bytes(16), "name": "club", "seats": float("inf"),
             "opener": stranger.public_key, "members": [], "state": "open"}
    assert lobby.receive(stranger.public_key, frame) == []


def test_lobby_does_not_sign_a_manifest_for_a_table_it_never_joined() -> None:
    me, stranger = Identity.generate(), Identity.generate()
    lobby = Lobby(me.public_key, "tcp://127.0.0.1:1", [(me, "moi")])
    table = bytes(range(16))
    offer = {"t": "offer", "table": table, "name": "piège", "seats": 3, "opener": stranger.public_key,
             "members": [], "state": "open"}
    lobby.receive(stranger.public_key, offer)
    members = [[stranger.public_key, "intrus", stranger.public_key, "tcp://127.0.0.1:2"],
               [me.public_key, "moi", me.public_key, "tcp://127.0.0.1:1"],
               [Identity.generate().public_key, "faux", stranger.public_key, "tcp://127.0.0.1:2"]]
    out = lobby.receive(stranger.public_key, {"t": "manifest", "table": table, "members": members})
    assert not any(frame.get("t") == "sign" for _, frame in out)


def test_a_flood_of_offers_is_bounded() -> None:
    me = Identity.generate()
    lobby = Lobby(me.public_key, "tcp://127.0.0.1:1", [(me, "moi")])
    for n in range(500):
        stranger = Identity.generate().public_key
        frame = {"t": "offer", "table": n.to_bytes(16, "big"), "name": f"t{n}", "seats": 3,
                 "opener": stranger, "members": [], "state": "open"}
        lobby.receive(stranger, frame)
    assert len(lobby.offers) <= 64
