"""Forming tables, sans IO: daemons exchanging lobby frames through an in-memory network."""

from __future__ import annotations

import logging
import os
import random
from collections.abc import Callable
from typing import Any

import msgpack
import pytest

from protocol.replication.identity import Identity
from protocol.replication.manifest import SilenceCost
from tarotd.coin import commitment
from tarotd.lobby import (
    BROADCAST,
    INVITE_ALPHABET,
    MANIFEST_DOMAIN,
    FrameOut,
    Invite,
    Lobby,
    Member,
    OfferState,
    ReadyTable,
    invite_code,
    manifest_bytes,
    table_id_of,
)


class Network:
    """Lobbies of several daemons; frames delivered in a seeded random order per run but
    in order per sender, as the mesh guarantees.  With ``peers`` every daemon lists every
    other with ``--peer`` (the lobbies trust each other); without, they know nobody, and
    only invite codes bring them together.  Frames to a key that is no lobby's (a
    stranger's) land in ``outside``."""

    def __init__(self, hosted: list[int], seed: int = 0, peers: bool = True) -> None:
        self.rng = random.Random(seed)
        self.lobbies: dict[bytes, Lobby] = {}
        trusts: Callable[[bytes], bool] = (
            (lambda key: key in self.lobbies) if peers else (lambda key: False)
        )
        for index, seats in enumerate(hosted):
            daemon = Identity.generate()
            identities = [(Identity.generate(), f"d{index}-s{k}") for k in range(seats)]
            endpoint = f"tcp://127.0.0.1:{9000 + index}"
            self.lobbies[daemon.public_key] = Lobby(
                daemon.public_key, endpoint, identities, trusts=trusts
            )
        self.queues: dict[tuple[bytes, bytes], list[dict[str, object]]] = {}
        self.ready: dict[bytes, list[ReadyTable]] = {key: [] for key in self.lobbies}
        self.outside: dict[bytes, list[dict[str, Any]]] = {}

    def post(self, sender: bytes, outs: list[FrameOut]) -> None:
        for destination, frame in outs:
            targets = (
                [k for k in self.lobbies if k != sender]
                if destination == BROADCAST
                else [destination]
            )
            for target in targets:
                wire = msgpack.unpackb(msgpack.packb(frame, use_bin_type=True), raw=False)
                if target in self.lobbies:
                    self.queues.setdefault((sender, target), []).append(wire)
                else:
                    self.outside.setdefault(target, []).append(wire)

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

    def tick(self, now: float) -> None:
        """The daemons' heartbeat at ``now``: knocks put off are knocked again."""
        for key, lobby in self.lobbies.items():
            self.post(key, lobby.heartbeat(now))
        self.run()

    def tables(self) -> set[bytes]:
        return {r.setup.table_id for ready in self.ready.values() for r in ready}


@pytest.mark.heavy
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
    garbage: list[object] = [
        None,
        3,
        "x",
        {},
        {"t": "offer"},
        {"t": "join", "table": b"short"},
        {"t": "sign", "table": b"x" * 16, "key": 5},
        {"t": "coin", "table": [], "key": b""},
        {
            "t": "offer",
            "table": b"x" * 16,
            "name": "n" * 500,
            "seats": 5,
            "opener": key,
            "members": [],
            "state": "open",
        },
    ]
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


def offer_frame(
    opener: bytes,
    name: str = "club",
    seats: object = 3,
    *,
    nonce: bytes | None = None,
    table: bytes | None = None,
    members: list[list[object]] | None = None,
) -> dict[str, Any]:
    """An offer as a stranger sends it: under the id its key and ``nonce`` give, unless
    ``table`` says otherwise."""
    nonce = nonce if nonce is not None else random.randbytes(16)
    return {
        "t": "offer",
        "table": table if table is not None else table_id_of(opener, nonce),
        "name": name,
        "seats": seats,
        "opener": opener,
        "members": members or [],
        "state": "open",
        "nonce": nonce,
    }


def smallest_id_of(opener: bytes) -> tuple[bytes, bytes]:
    """A nonce giving ``opener`` a table id below 00 00 ff…: smaller than any honest one, bar
    one chance in 65,536 — what a stranger grinding for the smallest id would send."""
    for n in range(10**7):
        nonce = n.to_bytes(16, "big")
        if table_id_of(opener, nonce)[:2] == b"\0\0":
            return nonce, table_id_of(opener, nonce)
    raise AssertionError("no nonce found")


def test_lobby_ignores_an_offer_with_infinitely_many_seats() -> None:
    me, stranger = Identity.generate(), Identity.generate()
    lobby = Lobby(me.public_key, "tcp://127.0.0.1:1", [(me, "moi")], trusts=lambda key: True)
    frame = offer_frame(stranger.public_key, seats=float("inf"))
    assert lobby.receive(stranger.public_key, frame) == [] and lobby.offers == {}


def test_lobby_does_not_sign_a_manifest_for_a_table_it_never_joined() -> None:
    me, stranger = Identity.generate(), Identity.generate()
    lobby = Lobby(me.public_key, "tcp://127.0.0.1:1", [(me, "moi")], trusts=lambda key: True)
    offer = offer_frame(stranger.public_key, "piège")
    lobby.receive(stranger.public_key, offer)
    assert offer["table"] in lobby.offers
    members = [
        [stranger.public_key, "intrus", stranger.public_key, "tcp://127.0.0.1:2"],
        [me.public_key, "moi", me.public_key, "tcp://127.0.0.1:1"],
        [Identity.generate().public_key, "faux", stranger.public_key, "tcp://127.0.0.1:2"],
    ]
    out = lobby.receive(
        stranger.public_key, {"t": "manifest", "table": offer["table"], "members": members}
    )
    assert not any(frame.get("t") == "sign" for _, frame in out)


def test_a_flood_of_offers_is_bounded() -> None:
    me = Identity.generate()
    lobby = Lobby(me.public_key, "tcp://127.0.0.1:1", [(me, "moi")])
    for n in range(500):
        stranger = Identity.generate().public_key
        lobby.receive(stranger, offer_frame(stranger, f"t{n}"))
    assert len(lobby.offers) == 64


# --- Ids bound to their openers, and whom a lobby trusts (issue 26, item 2) -------------


def test_an_offer_under_an_id_that_is_not_its_openers_is_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    me, stranger = Identity.generate(), Identity.generate().public_key
    lobby = Lobby(me.public_key, "tcp://127.0.0.1:1", [(me, "moi")], trusts=lambda key: True)
    for table in (
        bytes(16),
        table_id_of(me.public_key, bytes(16)),
    ):  # 00…00, and another daemon's id
        with caplog.at_level(logging.WARNING):
            assert lobby.receive(stranger, offer_frame(stranger, table=table)) == []
    assert lobby.offers == {}
    # once per daemon
    assert caplog.text.count("is not derived from its opener's key and nonce") == 1


@pytest.mark.heavy
@pytest.mark.parametrize("seed", range(4))
def test_a_strangers_offer_under_the_smallest_id_makes_nobody_withdraw_or_join(
    seed: int, caplog: pytest.LogCaptureFixture
) -> None:
    network = Network([1, 1, 1], seed)  # three daemons listing each other with --peer
    stranger = Identity.generate().public_key
    nonce, table = smallest_id_of(stranger)
    network.post(
        stranger,
        [
            (BROADCAST, offer_frame(stranger, nonce=nonce)),
            (BROADCAST, offer_frame(stranger, table=bytes(16))),
        ],
    )
    for key, lobby in network.lobbies.items():
        network.post(key, lobby.want("club", 3))
    with caplog.at_level(logging.WARNING):
        network.run()
    # heard, and bound to its opener
    assert all(table in lobby.offers for lobby in network.lobbies.values())
    assert network.outside == {}  # not one join, nor anything else, went to the stranger
    (ready,) = {r.setup for rs in network.ready.values() for r in rs}
    assert set(ready.members) == {
        m.key for lobby in network.lobbies.values() for m in lobby.members_here()
    }
    assert "not joining the offer of" in caplog.text


def test_a_strangers_join_is_refused_and_a_copied_proof_proves_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    network = Network([1, 1, 1], peers=False)
    opener, friend, other = network.lobbies.values()
    network.post(opener.daemon_key, opener.open("club", 3))
    network.run()
    (table,) = opener.offers
    invite = opener.offers[table].invite
    assert invite is not None
    knock = friend.join(table, invite.shown)
    answer = opener.receive(friend.daemon_key, knock[0][1])
    prove = friend.receive(opener.daemon_key, answer[0][1])
    assert [frame["t"] for _, frame in prove] == ["prove"]
    stranger = Identity.generate()
    seat = [[stranger.public_key, "intrus", stranger.public_key, "tcp://127.0.0.1:9"]]
    with caplog.at_level(logging.WARNING):
        assert (
            opener.receive(stranger.public_key, {"t": "join", "table": table, "members": seat})
            == []
        )
        assert opener.receive(stranger.public_key, prove[0][1]) == []  # the friend's own proof
        with pytest.raises(ValueError, match="opened by a daemon you do not know"):
            other.join(table)  # and no frame to send: the opener would refuse it as well
    assert [m.name for m in opener.offers[table].members] == ["d0-s0"]
    assert caplog.text.count("refused the seats of") == 1
    network.post(opener.daemon_key, opener.receive(friend.daemon_key, prove[0][1]))
    network.run()
    assert [m.name for m in opener.offers[table].members] == ["d0-s0", "d1-s0"]


def test_joining_by_code_checks_the_code_with_the_opener() -> None:
    network = Network([1, 1], peers=False)
    opener, joiner = network.lobbies.values()
    network.post(opener.daemon_key, opener.open("club", 3))
    network.run()
    (table,) = joiner.offers
    with pytest.raises(ValueError, match="is not an invite code"):
        joiner.join(table, "short")
    with pytest.raises(ValueError, match="too easy to guess"):
        joiner.join(table, "0000-0000")
    invite = opener.offers[table].invite
    assert invite is not None
    wrong = "7KQ2-M9XD" if invite.code != "7KQ2M9XD" else "7KQ2-M9XE"
    network.post(joiner.daemon_key, joiner.join(table, wrong))
    network.run()
    assert joiner.joined is None and joiner.offers[table].refused == "code"
    assert opener.guesses.wrong == 1 and len(opener.offers[table].members) == 1
    network.post(joiner.daemon_key, joiner.join(table, invite.code.lower()))
    network.run()  # too soon after its wrong code: the opener says wait, and the joiner waits
    assert len(opener.offers[table].members) == 1 and opener.guesses.refused == 1
    network.tick(10.0)
    assert len(opener.offers[table].members) == 2 and joiner.joined == table
    assert joiner.verified(joiner.offers[table]) and opener.guesses.right == 1


@pytest.mark.parametrize("seed", range(4))
def test_daemons_that_know_nobody_converge_on_the_opener_s_code(seed: int) -> None:
    # discovery alone: nobody is anybody's --peer
    network = Network([1, 1, 1, 1, 1], seed, peers=False)
    opener, *players, outsider = network.lobbies.values()
    network.post(opener.daemon_key, opener.want("club", 4))
    network.run()
    assert opener.invite is not None  # drawn, and what its screen shows
    for lobby in players:
        network.post(lobby.daemon_key, lobby.want("club", 4, opener.invite.shown))
    network.post(outsider.daemon_key, outsider.want("club", 4))  # no code: its own table
    network.run()
    (table,) = network.tables()
    assert {key for key, ready in network.ready.items() if ready} == {
        opener.daemon_key,
        *(p.daemon_key for p in players),
    }
    assert (
        outsider.joined != table
        and outsider.offers[outsider.joined or b""].opener == outsider.daemon_key
    )


@pytest.mark.parametrize("seed", range(4))
def test_daemons_given_the_same_code_converge_whoever_opens(seed: int) -> None:
    network = Network([1, 1, 1], seed, peers=False)
    for key, lobby in network.lobbies.items():
        network.post(key, lobby.want("club", 3, "7KQ2-M9XD"))
    network.run()
    assert len(network.tables()) == 1 and all(len(ready) == 1 for ready in network.ready.values())


def test_a_flood_of_strangers_offers_does_not_push_out_a_trusted_one() -> None:
    network = Network([1, 1])
    friend, me = network.lobbies.values()
    network.post(friend.daemon_key, friend.open("club", 4))
    network.run()
    (table,) = me.offers
    for n in range(300):
        stranger = Identity.generate().public_key
        me.receive(stranger, offer_frame(stranger, f"t{n}"))
    assert table in me.offers and len(me.offers) == 64


def test_invite_codes_are_read_as_typed() -> None:
    assert invite_code("7kq2-m9xd") == invite_code("7KQ2 M9XD") == "7KQ2M9XD"
    assert invite_code("OIL0-0000") == "01100000"  # O is 0, I and L are 1
    for wrong in ("7KQ2-M9X", "7KQ2-M9XDD", "UUUU-UUUU", "7KQ2_M9XD", ""):
        with pytest.raises(ValueError, match="is not an invite code"):
            invite_code(wrong)
    for weak in ("TR10-7777", "1234-5678", "ABCD-EFGH", "AB12-AB12", "ABAB-ABAB", "AAB1-B1AA"):
        with pytest.raises(ValueError, match="too easy to guess"):
            Invite.parse(weak)
    drawn = Invite.draw(random.Random(3).randbytes)
    assert len(drawn.code) == 8 and set(drawn.code) <= set(INVITE_ALPHABET)
    assert (
        drawn.shown == f"{drawn.code[:4]}-{drawn.code[4:]}" and Invite.parse(drawn.shown) == drawn
    )


# --- A manifest is checked whole, before anything changes --------------------------------


class Joined:
    """A lobby ("moi") at the table a trusted peer opened: the peer's seat, ours, and one more
    seat to fill — the moment its manifest comes."""

    def __init__(self) -> None:
        self.network = Network([1, 1], seed=4)
        self.opener, self.me = self.network.lobbies.values()
        self.network.post(self.opener.daemon_key, self.opener.open("club", 3))
        self.network.run()
        (self.table,) = self.me.offers
        self.network.post(self.me.daemon_key, self.me.join(self.table))
        self.network.run()
        self.offer = self.me.offers[self.table]
        self.seated = list(self.offer.members)
        assert [m.daemon for m in self.seated] == [self.opener.daemon_key, self.me.daemon_key]

    def member(
        self, name: str = "tiers", key: bytes | None = None, daemon: bytes | None = None
    ) -> list[object]:
        key = key or Identity.generate().public_key
        return [key, name, daemon or self.opener.daemon_key, "tcp://127.0.0.1:9000"]

    def manifest(self, members: object) -> list[FrameOut]:
        return self.me.receive(
            self.opener.daemon_key, {"t": "manifest", "table": self.table, "members": members}
        )


def test_a_manifest_with_more_members_than_seats_is_refused_whole_and_the_next_good_one_taken(
    caplog: pytest.LogCaptureFixture,
) -> None:
    joined = Joined()
    seated = [m.to_wire() for m in joined.seated]
    with caplog.at_level(logging.WARNING):
        assert joined.manifest([*seated, joined.member(), joined.member()]) == []
    assert "refused the manifest" in caplog.text and "4 members for 3 seats" in caplog.text
    assert joined.offer.state is OfferState.OPEN and joined.offer.members == joined.seated
    # still there, still filling
    assert joined.me.joined == joined.table and joined.me.filling() is joined.offer
    out = joined.manifest([*seated, joined.member()])
    assert [frame["t"] for _, frame in out] == ["sign"] and joined.me.offers[
        joined.table
    ].state is OfferState.FULL


def test_signatures_and_coins_for_more_members_than_seats_never_wedge_the_lobby() -> None:
    """The attack of the issue: a manifest of four for three seats, then the signatures and
    coins of three of the four, which used to set the table ready and raise a KeyError — a
    lobby that could then neither start that table nor leave it."""
    joined = Joined()
    extra = [Identity.generate() for _ in range(2)]
    members = [
        *joined.seated,
        *(
            Member(x.public_key, f"x{k}", joined.opener.daemon_key, "tcp://127.0.0.1:9000")
            for k, x in enumerate(extra)
        ),
    ]
    joined.manifest([m.to_wire() for m in members])
    document = MANIFEST_DOMAIN + manifest_bytes(joined.table, "club", members)
    for identity in (joined.opener.hosted[members[0].key][0], extra[0]):
        coin = random.randbytes(32)
        key = identity.public_key
        sign = {
            "t": "sign",
            "table": joined.table,
            "key": key,
            "sig": identity.sign(document),
            "commit": commitment(joined.table, key, coin),
        }
        joined.me.receive(joined.opener.daemon_key, sign)
        joined.me.receive(
            joined.opener.daemon_key,
            {"t": "coin", "table": joined.table, "coins": [[key, coin, []]]},
        )
    assert joined.offer.state is OfferState.OPEN and joined.me.take_ready() == []
    assert joined.me.leave() != [] and joined.me.joined is None  # not wedged: it can leave


@pytest.mark.parametrize(
    "why, members",
    [
        ("members is a msgpack array, got str 'everyone'", lambda j: "everyone"),
        ("2 members for 3 seats", lambda j: [m.to_wire() for m in j.seated]),
        (
            "seat 2: a member's key is not a valid Ed25519 public key",
            lambda j: [*(m.to_wire() for m in j.seated), j.member(key=b"\1" * 32)],
        ),
        (
            "seat 2: a member is an array of 4 or 5 items, got 1",
            lambda j: [*(m.to_wire() for m in j.seated), ["x"]],
        ),
        (
            "seat 2: a member's name is 0 to 64 characters, got 65",
            lambda j: [*(m.to_wire() for m in j.seated), j.member("n" * 65)],
        ),
        (
            "a seat's key appears twice",
            lambda j: [*(m.to_wire() for m in j.seated), j.seated[0].to_wire()],
        ),
        (
            "a seat of ours at another daemon",
            lambda j: [j.seated[0].to_wire(), j.member("moi", j.seated[1].key), j.member()],
        ),
        (
            "a seat we do not host at ours",
            lambda j: [*(m.to_wire() for m in j.seated), j.member(daemon=j.me.daemon_key)],
        ),
        ("none of our seats is in it", lambda j: [j.seated[0].to_wire(), j.member(), j.member()]),
    ],
)
def test_a_manifest_wrong_anywhere_changes_nothing(
    why: str, members: Callable[[Joined], object], caplog: pytest.LogCaptureFixture
) -> None:
    joined = Joined()
    with caplog.at_level(logging.WARNING):
        assert joined.manifest(members(joined)) == []
    assert why in caplog.text, caplog.text
    assert joined.offer.state is OfferState.OPEN and joined.offer.members == joined.seated
    assert joined.me._signatures == {} and joined.me._tosses == {}


def test_only_daemons_with_the_same_rule_for_silence_sit_together(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``tarotd --silence``: what a seat timed out before the reveal costs is the opener's
    rule, signed in the manifest — and nobody is bound by a rule it did not choose: an offer
    under another rule is not joined (said once), a manifest under another rule not signed."""
    network = Network([1, 1, 1, 1], seed=5)
    keys = list(network.lobbies)
    strict = keys[:3]
    for key in strict:
        network.lobbies[key].silence = SilenceCost.PENALTY
    for key, lobby in network.lobbies.items():
        network.post(key, lobby.want("club", 3))
    with caplog.at_level(logging.INFO, logger="tarotd.lobby"):
        network.run()
    ready = {r.setup for key in strict for r in network.ready[key]}
    assert len(ready) == 1 and next(iter(ready)).silence is SilenceCost.PENALTY
    assert not network.ready[keys[3]], "the daemon with the other rule sat at the table"
    assert "a silence before the reveal costs penalty there, and nothing here" in caplog.text
    # A manifest under another rule than ours: refused, nothing changed.
    joined = Joined()
    seated = [m.to_wire() for m in joined.seated]
    frame = {
        "t": "manifest",
        "table": joined.table,
        "members": [*seated, joined.member()],
        "silence": "penalty",
    }
    with caplog.at_level(logging.WARNING):
        assert joined.me.receive(joined.opener.daemon_key, frame) == []
    assert "it says a silence costs penalty, and this daemon's rule is nothing" in caplog.text
    assert joined.offer.state is OfferState.OPEN


# --- Strangers (issue 36): the invite code as a PAKE, guesses throttled, offers marked ---------


def counter(seed: int) -> Callable[[int], bytes]:
    """Deterministic entropy: the same bytes for the same seed, run after run."""
    rng = random.Random(seed)
    return rng.randbytes


def opener_with(code: str) -> tuple[Lobby, Identity]:
    """A lobby opening ``club`` under ``code``, its entropy and secrets drawn from fixed seeds."""
    me = Identity.from_private_bytes(bytes(range(32)))
    lobby = Lobby(me.public_key, "tcp://127.0.0.1:1", [(me, "moi")], counter(1), secrets=counter(2))
    return lobby, me


def old_style_proof(code: str, table: bytes, opener: bytes) -> bytes:
    """The invite proof of before: HMAC(scrypt(code, constant salt), "offer" ‖ table ‖ opener)."""
    import hashlib
    import hmac

    key = hashlib.scrypt(code.encode(), salt=b"tarot/lobby-invite\x00", n=2**14, r=8, p=1, dklen=32)
    return hmac.digest(key, b"offer" + table + opener, "sha256")


def test_a_stranger_that_records_everything_the_opener_sends_finds_no_guess_to_test() -> None:
    """The stranger completes what a HELLO gives it — the opener's offers — and knocks once
    with a guess, then tries each candidate code offline against every byte string it was
    sent: as the old proof (HMAC of the stretched code), and as the opener's confirmation tag
    a run under that candidate would give.  Nothing matches, not even for the right code; and
    what the opener sent before any proof is the same bytes whatever its code, but for its CPace
    share, a uniform element whatever the code."""
    from protocol import pake

    right, other = "7KQ2-M9XD", "H4NP-3WRC"
    sent: dict[str, list[dict[str, Any]]] = {}
    runs: dict[str, pake.Joining] = {}
    stranger = Identity.from_private_bytes(bytes(range(1, 33))).public_key
    for code in (right, other):
        opener, _ = opener_with(code)
        frames = [frame for _, frame in opener.want("club", 3, code)]
        (table,) = opener.offers
        guess = pake.Joining.start(
            b"AAAB1234", pake.channel(table, stranger, opener.daemon_key), counter(3)
        )
        runs[code] = guess
        knock = {"t": "knock", "table": table, "sid": guess.sid, "share": guess.share}
        frames += [frame for _, frame in opener.receive(stranger, knock)]
        frames += [frame for _, frame in opener.announcements()]
        sent[code] = [msgpack.unpackb(msgpack.packb(f), raw=False) for f in frames]
    assert [f["t"] for f in sent[right]] == ["offer", "answer", "offer"]
    without_share = [{k: v for k, v in f.items() if k != "share"} for f in sent[right]]
    assert without_share == [{k: v for k, v in f.items() if k != "share"} for f in sent[other]]
    recorded = {v for f in sent[right] for v in f.values() if isinstance(v, bytes)}
    table = sent[right][0]["table"]
    opener_key = sent[right][0]["opener"]
    answer = sent[right][1]
    for candidate in (right, other, "AAAB-1234", "TR1X-7A7B"):
        code = invite_code(candidate)
        assert old_style_proof(code, table, opener_key) not in recorded
        # the key the stranger holds is ya·Yb whatever it supposes the code to be: the tag of
        # an opener under the candidate, from the stranger's own run, is never among what it got
        tag = runs[right].answer(answer["share"])
        assert tag not in recorded
        ci = pake.channel(table, stranger, opener_key)
        assert pake.calculate_generator(code.encode(), ci, answer["sid"]) not in recorded


def test_wrong_guesses_are_counted_throttled_and_locked_out_per_key_and_host(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A stranger knocking and proving a wrong code again and again from one key, then from
    fresh keys on the same host: a growing wait, then a lockout of the key, then of the host; a
    player with the right code from another host is still seated, and ``unlock`` lifts them."""
    from protocol import pake

    opener, _ = opener_with("7KQ2-M9XD")
    opener.want("club", 3, "7KQ2-M9XD")
    (table,) = opener.offers
    now = 0.0

    def guess(key: bytes, host: str, code: bytes = b"WRNG0C0D") -> str:
        run = pake.Joining.start(code, pake.channel(table, key, opener.daemon_key), os.urandom)
        opener.heartbeat(now)
        out = opener.receive(
            key, {"t": "knock", "table": table, "sid": run.sid, "share": run.share}, host
        )
        if out[0][1]["t"] == "refused":
            return str(out[0][1]["why"])
        tag = run.answer(out[0][1]["share"])
        (reply,) = opener.receive(
            key, {"t": "prove", "table": table, "sid": run.sid, "tag": tag}, host
        )
        if reply[1]["t"] == "proven":
            assert run.confirms(reply[1]["tag"])
            return "proven"
        return str(reply[1]["why"])

    hammering, patient = Identity.generate().public_key, Identity.generate().public_key
    with caplog.at_level(logging.WARNING):
        answers = []
        for _ in range(3000):  # 100 a second from one key and host, never waiting
            answers.append(guess(hammering, "198.18.0.66"))
            now += 0.01
        assert answers[:2] == ["code", "wait"] and answers[-1] == "locked"
        assert answers.count("code") == opener.guesses.wrong == 2  # at 0 s and 0.5 s
        assert answers.index("locked") == 51  # its 50th knock told to wait locks key and host
        assert opener.guesses.is_locked(hammering, "198.18.0.1") and opener.guesses.lockouts == 2
        while guess(patient, "198.18.0.67") != "locked":  # waits as told, every time
            now += 61.0
        assert opener.guesses.wrong == 12 and opener.guesses.lockouts == 3
        for _ in range(40):  # then fresh keys from its host, each patient
            now += 120.0
            guess(Identity.generate().public_key, "198.18.0.67")
        assert opener.guesses.wrong == 32 and opener.guesses.lockouts == 4
        assert guess(Identity.generate().public_key, "198.18.0.67") == "locked"
    assert "locked out after 50 knocks while told to wait" in caplog.text
    assert "locked out after 10 wrong invite codes" in caplog.text
    assert "host 198.18.0.67 locked out after 30 wrong invite codes" in caplog.text
    locked = opener.guesses.summary()["locked"]
    assert isinstance(locked, list) and len(locked) == 4
    player = Identity.generate().public_key
    assert guess(player, "198.18.0.7", b"7KQ2M9XD") == "proven"  # the right code, another host
    assert player in opener.offers[table].invited
    assert opener.unlock() == 4
    now += 1.0
    assert guess(hammering, "198.18.0.66") == "code"


def test_a_knock_left_unproved_counts_as_a_wrong_guess() -> None:
    from protocol import pake

    opener, _ = opener_with("7KQ2-M9XD")
    opener.want("club", 3, "7KQ2-M9XD")
    (table,) = opener.offers
    stranger = Identity.generate().public_key
    for _ in range(2):
        run = pake.Joining.start(
            b"WRNG0C0D", pake.channel(table, stranger, opener.daemon_key), os.urandom
        )
        opener.receive(stranger, {"t": "knock", "table": table, "sid": run.sid, "share": run.share})
    assert opener.guesses.wrong == 1


def test_a_stranger_offering_40_tables_is_listed_apart_and_capped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    network = Network([1, 1])
    friend, me = network.lobbies.values()
    network.post(friend.daemon_key, friend.open("club", 4))
    network.run()
    stranger = Identity.generate().public_key
    with caplog.at_level(logging.WARNING):
        for n in range(40):
            me.receive(stranger, offer_frame(stranger, "club" if n == 0 else f"club{n}"))
    theirs = [o for o in me.tables() if o.opener == stranger]
    assert len(theirs) == 3 and not any(me.verified(o) for o in theirs)
    (friends,) = [o for o in me.tables() if o.opener == friend.daemon_key]
    assert me.verified(friends)
    assert caplog.text.count("ignored further offers from") == 1


@pytest.mark.parametrize(
    "code, why",
    [
        ("TR10-7777", "it repeats 7 three times in a row"),
        ("2026-1206", "it is digits only"),
        ("ABCD-7K4W", "ABCD runs in order"),
        ("K4WZ-K4WZ", "it repeats itself"),
        ("AABB-ABAB", "fewer than 5 different letters and digits"),
    ],
)
def test_tarotd_refuses_a_weak_invite_code_at_start_saying_why(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: os.PathLike[str],
    code: str,
    why: str,
) -> None:
    from tarotd.cli import parse

    monkeypatch.delenv("TAROT_TESTING", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        parse(["--home", f"{tmp_path}/home", "--table", "club", "--invite", code])
    assert exit_info.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("tarotd: error: argument --invite:") and "too easy to guess" in line
    assert why in line, line


def test_a_joiner_lets_fake_openers_test_a_bounded_number_of_guesses_of_its_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each knock hands the opener the joiner's proof first: one guess of the joiner's code
    for a fake opener of the wanted name.  Twenty daemons offering ``club`` under other codes,
    the bound (64, as many as the offers kept) lowered to 16 here: the joiner knocks at 16 of
    them, is refused by each, and knocks at no more; a knock never answered counts too."""
    monkeypatch.setattr("tarotd.lobby.core.MAX_FAILED_KNOCKS", 16)
    network = Network([1] * 21, peers=False)
    joiner, *fakes = network.lobbies.values()
    for fake in fakes:
        network.post(fake.daemon_key, fake.open("club", 3))  # each under a code of its own
    network.run()
    network.post(joiner.daemon_key, joiner.want("club", 3, "H4NP-3WRC"))
    network.run()
    knocked = sum(fake.guesses.wrong for fake in fakes)
    assert knocked == 16
    assert sum(o.refused == "code" for o in joiner.offers.values()) == 16
    network.tick(100.0)
    assert sum(fake.guesses.wrong for fake in fakes) == 16  # and none after
    silent = Lobby(Identity.generate().public_key, "tcp://127.0.0.1:2", [])
    silent.want("club", 3, "H4NP-3WRC")
    stranger = Identity.generate().public_key
    silent.heartbeat(1000.0)
    assert [f["t"] for _, f in silent.receive(stranger, offer_frame(stranger))] == ["knock"]
    silent.heartbeat(1020.0)
    theirs = [o for o in silent.offers.values() if o.opener == stranger]
    assert [o.refused for o in theirs] == [None]
    silent.heartbeat(1031.0)  # 31 s without an answer
    assert [o.refused for o in theirs] == ["silent"]


def test_asking_twice_to_join_by_code_knocks_once() -> None:
    """A player pressing Enter twice: one run of CPace, not a second that would leave the first
    unproved — which the opener counts as a wrong guess."""
    network = Network([1, 1], peers=False)
    opener, joiner = network.lobbies.values()
    network.post(opener.daemon_key, opener.open("club", 3))
    network.run()
    (table,) = joiner.offers
    invite = opener.offers[table].invite
    assert invite is not None
    first = joiner.join(table, invite.shown)
    assert joiner.join(table, invite.shown) == []
    network.post(joiner.daemon_key, first)
    network.run()
    assert opener.guesses.wrong == 0 and len(opener.offers[table].members) == 2


@pytest.mark.parametrize(
    "frame",
    [
        {"t": "answer", "sid": 2**40, "share": bytes(32)},
        {"t": "prove", "sid": 2**40, "tag": bytes(64)},
        {"t": "proven", "sid": 2**40, "tag": bytes(64)},
        {"t": "refused", "sid": 2**40, "why": "code"},
        {"t": "sign", "key": 2**40, "sig": bytes(64), "commit": bytes(32)},
        {"t": "sign", "key": bytes(32), "sig": 2**40, "commit": bytes(32)},
        {"t": "leave", "keys": [2**40]},
    ],
    ids=["answer", "prove", "proven", "refused", "sign-key", "sign-sig", "leave"],
)
def test_a_number_where_bytes_go_is_refused_not_allocated(frame: dict[str, Any]) -> None:
    """``bytes(n)`` of a number n is n zero bytes: 2⁴⁰ of them would take the daemon down."""
    network = Network([1, 1], peers=False)
    opener, joiner = network.lobbies.values()
    network.post(opener.daemon_key, opener.open("club", 3))
    network.run()
    (table,) = joiner.offers
    invite = opener.offers[table].invite
    assert invite is not None
    knock = joiner.join(table, invite.shown)
    opener.receive(joiner.daemon_key, knock[0][1])  # a run under way at both
    for lobby, sender in ((opener, joiner.daemon_key), (joiner, opener.daemon_key)):
        assert lobby.receive(sender, {**frame, "table": table}) == []
