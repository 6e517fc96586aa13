"""LAN discovery: the beacon codec (and everything it must refuse), the peer table, the
rate limiter, and real Discovery endpoints finding each other on loopback.

Loopback only: every endpoint here is made with ``broadcast=False`` so that nothing is
ever sent to the machine's real interfaces; they reach each other through explicit
targets, 127.255.255.255 (loopback broadcast) or 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.replication.identity import Identity
from tarotd.discovery import (
    BEACON_MAGIC,
    BEACON_VERSION,
    MAX_BEACON_SIZE,
    MAX_TABLES,
    MAX_TIMESTAMP,
    Announcement,
    Beacon,
    BeaconError,
    Discovery,
    Peer,
    PeerTable,
    RateLimiter,
    TableInfo,
    broadcast_addresses,
    decode_beacon,
    encode_beacon,
    make_beacon,
    subnet_broadcast,
)
from tarotd.mesh.bounds import Census, Room, Standing, room_for, stranger_share, unanswered

ROOT = Path(__file__).resolve().parent.parent

ALICE = Identity.from_private_bytes(bytes(range(32)))
BOB = Identity.from_private_bytes(bytes(range(1, 33)))
CAROL = Identity.from_private_bytes(bytes(range(2, 34)))
HEADER = BEACON_MAGIC + bytes([BEACON_VERSION])
TABLE_ID = bytes(range(16))
NOW = 1_700_000_000
MISSING = object()


def beacon(
    identity: Identity = ALICE,
    *,
    name: str = "alice",
    tables: tuple[TableInfo, ...] = (TableInfo("salon", 5, 2, True, TABLE_ID),),
    goodbye: bool = False,
    timestamp: int = NOW,
) -> Beacon:
    return Beacon(
        name=name,
        key=identity.public_key,
        port=5555,
        tables=tables,
        goodbye=goodbye,
        timestamp=timestamp,
    )


def wire(**changes: object) -> dict[str, object]:
    """ALICE's beacon body as msgpack fields, with changes (MISSING drops a field)."""
    fields: dict[str, object] = {
        "name": "alice",
        "key": ALICE.public_key,
        "port": 5555,
        "tables": [["salon", 5, 2, True, TABLE_ID]],
        "goodbye": False,
        "timestamp": NOW,
    }
    fields.update(changes)
    return {name: value for name, value in fields.items() if value is not MISSING}


def forge(body: object, identity: Identity = ALICE, header: bytes = HEADER) -> bytes:
    """A datagram with any body, correctly signed: only the field checks can refuse it."""
    signed: bytes = header + msgpack.packb(body, use_bin_type=True)
    return signed + identity.sign(signed)


def rejects(data: bytes, match: str) -> None:
    with pytest.raises(BeaconError, match=match):
        decode_beacon(data)


# --- codec ------------------------------------------------------------------------------


def test_round_trip() -> None:
    original = beacon()
    data = encode_beacon(original, ALICE)
    assert data.startswith(HEADER)
    assert decode_beacon(data) == original


def test_round_trip_of_a_goodbye_with_no_tables_and_an_anonymous_table() -> None:
    original = beacon(tables=(TableInfo("x", 3, 0, False),), goodbye=True, timestamp=0)
    assert decode_beacon(encode_beacon(original, ALICE)) == original
    original = beacon(tables=())
    assert decode_beacon(encode_beacon(original, ALICE)) == original


def test_encode_refuses_another_identity() -> None:
    with pytest.raises(BeaconError, match="not the public key"):
        encode_beacon(beacon(), BOB)


def test_encode_refuses_an_oversized_beacon() -> None:
    tables = tuple(TableInfo("é" * 64, 5, 0, True, TABLE_ID) for _ in range(MAX_TABLES))
    with pytest.raises(BeaconError, match="over the 1400-byte limit"):
        encode_beacon(beacon(tables=tables), ALICE)


def test_make_beacon_keeps_the_first_tables_that_fit() -> None:
    tables = [TableInfo(f"{i:02d}" + "t" * 62, 5, 0, True, TABLE_ID) for i in range(MAX_TABLES + 4)]
    made = make_beacon("alice", ALICE.public_key, 5555, tables, False, NOW)
    assert 0 < len(made.tables) < MAX_TABLES
    assert made.tables == tuple(tables[: len(made.tables)])
    assert len(encode_beacon(made, ALICE)) <= MAX_BEACON_SIZE


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"", "bad magic"),
        (b"ZRE\x01" + bytes(100), "bad magic"),
        (b"TAROT", "too short"),
        (HEADER + bytes(64), "too short"),
        (b"TAROT\x02" + bytes(100), "unsupported beacon version 2"),
        (HEADER + bytes(MAX_BEACON_SIZE), "1406 bytes is over the 1400-byte limit"),
    ],
)
def test_frame_rejections(data: bytes, match: str) -> None:
    rejects(data, match)


def test_rejects_what_is_not_bytes() -> None:
    rejects(bytearray(encode_beacon(beacon(), ALICE)), "a beacon is bytes, not bytearray")  # type: ignore[arg-type]  # a bytearray on purpose: refused


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (b"\xc1", "body is not one msgpack value"),  # 0xc1 is never used in msgpack
        (b"\x92\x01", "body is not one msgpack value"),  # an array cut short
        (msgpack.packb(wire()) + b"\x00", "body is not one msgpack value.*ExtraData"),
        (b"\xa2\xff\xfe", "body is not one msgpack value"),  # a str that is not UTF-8
        (b"\x81\x01\x02", "body is not one msgpack value"),  # an integer map key
    ],
)
def test_malformed_msgpack(body: bytes, match: str) -> None:
    signed = HEADER + body
    rejects(signed + ALICE.sign(signed), match)


SMALL_ORDER_KEY = bytes([1]) + bytes(31)  # the identity point: anybody "signs" for it

FIELD_REJECTIONS: list[tuple[dict[str, object], str]] = [
    ({"timestamp": MISSING}, "beacon body misses the field 'timestamp'"),
    ({"name": MISSING}, "beacon body misses the field 'name'"),
    ({"key": MISSING}, "beacon body misses the field 'key'"),
    ({"port": MISSING}, "beacon body misses the field 'port'"),
    ({"tables": MISSING}, "beacon body misses the field 'tables'"),
    ({"goodbye": MISSING}, "beacon body misses the field 'goodbye'"),
    ({"address": "10.0.0.1"}, "body has unexpected fields 'address'"),
    ({"name": 7}, "name is a string, got int"),
    ({"name": ""}, "name is 1 to 64 characters, got 0"),
    ({"name": "x" * 65}, "name is 1 to 64 characters, got 65"),
    ({"name": "evil\x1b[2J"}, "control or separator character U\\+001B"),
    ({"name": "two\u2028lines"}, "U\\+2028"),
    ({"key": "alice"}, "key is bytes, got str"),
    ({"key": ALICE.public_key[:31]}, "key is 32 bytes, got 31"),
    ({"key": SMALL_ORDER_KEY}, "not a valid Ed25519 public key"),
    ({"port": True}, "port is an integer, got bool"),
    ({"port": "5555"}, "port is an integer, got str"),
    ({"port": 0}, "port 0 is out of range 1..65535"),
    ({"port": 65536}, "port 65536 is out of range"),
    ({"tables": {}}, "tables is a msgpack array, got dict"),
    ({"tables": [["t", 5, 0, True, None]] * 17}, "tables holds at most 16 items, got 17"),
    (
        {"tables": [["t", 5, 0, True]]},
        "table 0 is an array \\[name, seats, members, open, table_id\\]",
    ),
    ({"tables": ["salon"]}, "table 0 is an array"),
    ({"tables": [["t", 2, 0, True, None]]}, "table 0: seats 2 is out of range 3..5"),
    ({"tables": [["t", 6, 0, True, None]]}, "table 0: seats 6 is out of range 3..5"),
    ({"tables": [["t", 4, 5, True, None]]}, "table 0: members 5 is out of range 0..4"),
    ({"tables": [["t", 4, -1, True, None]]}, "members -1 is out of range"),
    ({"tables": [["t", 4, 0, 1, None]]}, "table 0: open is a boolean, got int"),
    ({"tables": [["t", 4, 0, True, bytes(15)]]}, "table 0: table id is 16 bytes, got 15"),
    ({"tables": [["t", 4, 0, True, "id"]]}, "table id is bytes, got str"),
    ({"tables": [["t" * 65, 4, 0, True, None]]}, "table 0: table name is 1 to 64 characters"),
    (
        {"tables": [["ok", 4, 0, True, None], [1, 4, 0, True, None]]},
        "table 1: table name is a string",
    ),
    ({"goodbye": 0}, "goodbye is a boolean, got int"),
    ({"timestamp": -1}, "timestamp -1 is out of range"),
    ({"timestamp": MAX_TIMESTAMP + 1}, "out of range"),
    ({"timestamp": "now"}, "timestamp is an integer, got str"),
    ({"timestamp": 1.5}, "the beacon body holds a float"),
]


@pytest.mark.parametrize(("changes", "match"), FIELD_REJECTIONS)
def test_field_rejections(changes: dict[str, object], match: str) -> None:
    rejects(forge(wire(**changes)), match)


@pytest.mark.parametrize("body", [[1, 2], "alice", None, 7])
def test_body_must_be_a_map(body: object) -> None:
    rejects(forge(body), "the beacon body is a msgpack map")


def test_an_ext_type_is_no_body() -> None:
    rejects(forge(msgpack.ExtType(1, b"x")), "ext type 1 is not part of the protocol")


def test_bad_signatures() -> None:
    rejects(forge(wire(), identity=BOB), "bad signature")  # ALICE's key, BOB's signature
    data = encode_beacon(beacon(), ALICE)
    rejects(data[:-1] + bytes([data[-1] ^ 1]), "bad signature")
    rejects(data[:-64] + bytes(64), "bad signature")


def test_a_third_party_address_cannot_be_smuggled_in() -> None:
    """The only address of a peer is the datagram's source: a beacon has no field for one."""
    rejects(forge(wire(host="198.18.0.99")), "unexpected fields 'host'")


names = st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=64
)
table_infos = st.integers(3, 5).flatmap(
    lambda seats: st.builds(
        TableInfo,
        names,
        st.just(seats),
        st.integers(0, seats),
        st.booleans(),
        st.none() | st.binary(min_size=16, max_size=16),
    )
)


@pytest.mark.heavy
@given(
    names,
    st.integers(1, 65535),
    st.lists(table_infos, max_size=MAX_TABLES + 2),
    st.booleans(),
    st.integers(0, MAX_TIMESTAMP),
)
def test_round_trip_property(
    name: str, port: int, tables: list[TableInfo], goodbye: bool, timestamp: int
) -> None:
    made = make_beacon(name, ALICE.public_key, port, tables, goodbye, timestamp)
    assert made.tables == tuple(tables[: len(made.tables)])
    data = encode_beacon(made, ALICE)
    assert len(data) <= MAX_BEACON_SIZE
    assert decode_beacon(data) == made


def decodes_or_rejects(data: bytes) -> None:
    """The property of every fuzz test: a Beacon or a BeaconError, never anything else."""
    try:
        decode_beacon(data)
    except BeaconError:
        pass


@given(st.binary(max_size=MAX_BEACON_SIZE + 20))
def test_fuzz_raw_bytes(data: bytes) -> None:
    decodes_or_rejects(data)


@given(st.binary(max_size=MAX_BEACON_SIZE))
def test_fuzz_after_a_valid_header(data: bytes) -> None:
    decodes_or_rejects(HEADER + data)


msgpack_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=70)
    | st.binary(max_size=40)
    | st.builds(msgpack.ExtType, st.integers(0, 127), st.binary(max_size=8)),
    lambda children: (
        st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=10), children, max_size=7)
    ),
    max_leaves=30,
)
field_values = {
    "name": names | msgpack_values,
    "key": st.just(ALICE.public_key) | msgpack_values,
    "port": st.integers(-5, 70000) | msgpack_values,
    "tables": st.lists(st.lists(msgpack_values | st.integers(0, 6), max_size=6), max_size=18)
    | msgpack_values,
    "goodbye": st.booleans() | msgpack_values,
    "timestamp": st.integers(-5, 2**64 - 1) | msgpack_values,
}


@pytest.mark.heavy
@given(msgpack_values)
def test_fuzz_signed_bodies(body: object) -> None:
    decodes_or_rejects(forge(body))


@pytest.mark.heavy
@given(
    st.fixed_dictionaries({}, optional=field_values),
    st.dictionaries(st.text(max_size=5), msgpack_values, max_size=2),
)
def test_fuzz_signed_fields(fields: dict[str, object], extra: dict[str, object]) -> None:
    decodes_or_rejects(forge({**extra, **fields}))


@given(st.data())
def test_any_changed_byte_is_rejected(data: st.DataObject) -> None:
    original = encode_beacon(beacon(), ALICE)
    position = data.draw(st.integers(0, len(original) - 1))
    flip = data.draw(st.integers(1, 255))
    tampered = original[:position] + bytes([original[position] ^ flip]) + original[position + 1 :]
    with pytest.raises(BeaconError):
        decode_beacon(tampered)


# --- the peer table -----------------------------------------------------------------------


def test_peer_table_lists_a_new_peer_from_its_source_address() -> None:
    table = PeerTable(ALICE.public_key, expiry=5.0)
    assert table.heard(beacon(BOB, name="bob"), "198.18.0.2", now=10.0)
    [peer] = table.peers()
    assert (peer.key, peer.name, peer.host, peer.port, peer.last_seen) == (
        BOB.public_key,
        "bob",
        "198.18.0.2",
        5555,
        10.0,
    )
    assert peer.endpoint == "tcp://198.18.0.2:5555"
    assert peer.fingerprint == BOB.fingerprint


def test_peer_table_refresh_is_no_change_but_new_tables_are() -> None:
    table = PeerTable(ALICE.public_key)
    table.heard(beacon(BOB), "h", now=1.0)
    assert not table.heard(beacon(BOB, timestamp=NOW + 1), "h", now=2.0)
    assert table.peers()[0].last_seen == 2.0
    assert table.heard(beacon(BOB, timestamp=NOW + 2, tables=()), "h", now=3.0)
    assert table.peers()[0].tables == ()


def test_peer_table_ignores_its_own_key() -> None:
    table = PeerTable(ALICE.public_key)
    assert not table.heard(beacon(ALICE), "127.0.0.1", now=1.0)
    assert table.peers() == []


def test_peer_table_expiry() -> None:
    table = PeerTable(ALICE.public_key, expiry=5.0)
    table.heard(beacon(BOB, name="bob"), "b", now=0.0)
    table.heard(beacon(CAROL, name="carol"), "c", now=3.0)
    assert table.expire(5.0) == []  # exactly the expiry is still alive
    gone = table.expire(5.5)
    assert [peer.name for peer in gone] == ["bob"]
    assert [peer.name for peer in table.peers()] == ["carol"]
    assert [peer.name for peer in table.expire(100.0)] == ["carol"]
    assert table.peers() == []


def test_peer_table_goodbye_removes_at_once() -> None:
    table = PeerTable(ALICE.public_key)
    table.heard(beacon(BOB), "b", now=0.0)
    assert table.heard(beacon(BOB, goodbye=True), "b", now=0.1)
    assert table.peers() == []
    assert not table.heard(beacon(CAROL, goodbye=True), "c", now=0.2)  # never known: no change


def test_peer_table_ignores_replays() -> None:
    table = PeerTable(ALICE.public_key)
    table.heard(beacon(BOB, timestamp=NOW), "b", now=0.0)
    table.heard(beacon(BOB, timestamp=NOW + 5, goodbye=True), "b", now=1.0)
    # An attacker replays what BOB said before his goodbye: BOB stays gone.
    assert not table.heard(beacon(BOB, timestamp=NOW), "b", now=2.0)
    assert not table.heard(beacon(BOB, timestamp=NOW + 5), "b", now=2.0)
    assert table.peers() == []
    # BOB comes back: a newer beacon.
    assert table.heard(beacon(BOB, timestamp=NOW + 6), "b", now=3.0)
    # A replayed old goodbye does not remove him.
    assert not table.heard(beacon(BOB, timestamp=NOW + 5, goodbye=True), "b", now=3.5)
    assert len(table.peers()) == 1


def test_peer_table_address_moves_only_with_a_newer_beacon() -> None:
    table = PeerTable(ALICE.public_key)
    table.heard(beacon(BOB, timestamp=NOW), "198.18.0.2", now=0.0)
    # same beacon, elsewhere
    assert not table.heard(beacon(BOB, timestamp=NOW), "198.18.0.66", now=0.1)
    assert table.peers()[0].host == "198.18.0.2"
    assert table.heard(beacon(BOB, timestamp=NOW + 1), "198.18.0.3", now=1.0)  # BOB changed network
    assert table.peers()[0].host == "198.18.0.3"


def test_peer_table_is_bounded_and_strangers_never_hold_every_entry() -> None:
    table = PeerTable(ALICE.public_key, max_peers=4)
    for seed in range(3, 8):
        identity = Identity.from_private_bytes(bytes([seed]) * 32)
        table.heard(beacon(identity), f"h{seed}", now=0.0)
    assert len(table.peers()) == 3 == stranger_share(4)  # one entry kept from strangers
    assert table.full == 2 and table.refused is Room.STRANGERS_FULL
    table.want(["salon"])  # the beacons name "salon": they are all wanted now
    assert {peer.standing for peer in table.peers()} == {Standing.WANTED}
    table.heard(beacon(Identity.from_private_bytes(bytes([9]) * 32)), "h9", now=0.0)
    assert len(table.peers()) == 4 and table.refused is None
    table.heard(beacon(Identity.from_private_bytes(bytes([10]) * 32)), "h10", now=0.0)
    assert len(table.peers()) == 4 and table.refused is Room.FULL  # one each: nobody crowds


# --- the peer table under a flood of fresh keys (issue 36, item 1) --------------------------

CLUB = (TableInfo("club", 3, 1, True, TABLE_ID),)
FLOOD_HOSTS = [f"198.18.40.{100 + n}" for n in range(40)]


def flood(
    table: PeerTable,
    seconds: float,
    per_host: int,
    tables: tuple[TableInfo, ...] = (),
    players: tuple[tuple[Identity, str], ...] = (),
    start: float = 0.0,
) -> list[bool]:
    """``per_host`` fresh keys a second from each of :data:`FLOOD_HOSTS` (what the rate
    limiter lets through), and each of ``players`` beaconing once a second from its own host,
    naming "club": whether every player was listed, at each of its beacons."""
    listed = []
    steps = int(seconds * per_host)
    for step in range(steps):
        now = start + step / per_host
        for host in FLOOD_HOSTS:
            table.heard(beacon(Identity.generate(), name="intrus", tables=tables), host, now)
        if step % per_host == 0:
            for identity, host in players:
                table.heard(beacon(identity, tables=CLUB, timestamp=NOW + step), host, now)
            keys = {peer.key for peer in table.peers()}
            listed.append(all(identity.public_key in keys for identity, _ in players))
        table.expire(now)
    return listed


def test_a_flood_of_strangers_never_holds_the_entries_kept_for_the_tables_we_want() -> None:
    table = PeerTable(ALICE.public_key, expiry=5.0, max_peers=64)
    table.want(["club"])
    # The flood fills what strangers may hold before the players come, as at a club night.
    flood(table, seconds=2.0, per_host=5)
    strangers = [peer for peer in table.peers() if peer.standing is Standing.STRANGER]
    assert len(strangers) == stranger_share(64) == len(table.peers())
    listed = flood(table, 4.0, 5, players=((BOB, "198.18.40.2"), (CAROL, "198.18.40.3")), start=2)
    assert all(listed), listed  # from their first beacon on, for good
    assert len([p for p in table.peers() if p.standing is Standing.STRANGER]) <= stranger_share(64)


def test_a_flood_that_names_our_table_cannot_keep_a_host_of_one_daemon_out() -> None:
    """Anyone can name "club" in a beacon: wanted fakes from forty hosts take the whole table,
    but a newcomer from a host holding fewer entries takes the place of one from the host
    holding the most — so the real opener, alone at its address, gets in and stays."""
    table = PeerTable(ALICE.public_key, expiry=5.0, max_peers=64)
    table.want(["club"])
    flood(table, seconds=2.0, per_host=5, tables=CLUB)
    assert len(table.peers()) == 64
    listed = flood(table, 4.0, 5, tables=CLUB, players=((BOB, "198.18.40.2"),), start=2)
    assert all(listed), listed
    assert table.full > 0  # the fakes churn among themselves, or are refused


def test_a_key_that_proved_itself_comes_before_beacons_that_name_our_table() -> None:
    table = PeerTable(ALICE.public_key, max_peers=4)
    table.want(["club"])
    for n in range(4):  # four fakes naming our table, one host each: nobody crowds
        table.heard(beacon(Identity.generate(), tables=CLUB), f"h{n}", now=0.0)
    assert not table.heard(beacon(BOB, tables=()), "b", now=0.0)  # a stranger: no room
    assert table.refused is Room.FULL
    assert not table.favour(BOB.public_key)  # not listed: nothing changed
    assert table.heard(beacon(BOB, tables=(), timestamp=NOW + 1), "b", now=1.0)
    assert table.evicted is not None and table.evicted.standing is Standing.WANTED
    [bob] = [peer for peer in table.peers() if peer.key == BOB.public_key]
    assert bob.standing is Standing.PROVEN


@dataclass(frozen=True)
class Link:
    """A link as :func:`room_for` sees it."""

    host: str
    standing: Standing = Standing.STRANGER
    settled: bool = False
    since: float = 0.0


def test_a_link_that_answered_goes_only_for_a_better_standing() -> None:
    wanted = [Link(f"h{n}", Standing.WANTED, settled=True) for n in range(3)]
    crowded = [Link("flood", Standing.WANTED, since=n) for n in range(3)]
    assert room_for(wanted, "x", Standing.WANTED, 3) == (Room.FULL, None)
    assert room_for(wanted, "x", Standing.PROVEN, 3) == (Room.EVICT, wanted[0])
    # Unsettled, from one host holding all three: the oldest goes for a newcomer from elsewhere,
    # not for one more from that host.
    assert room_for(crowded, "x", Standing.WANTED, 3) == (Room.EVICT, crowded[0])
    assert room_for(crowded, "flood", Standing.WANTED, 3) == (Room.FULL, None)
    # A stranger is refused while strangers hold their share, whatever room is left.
    strangers = [Link(f"s{n}") for n in range(stranger_share(8))]
    assert room_for(strangers, "y", Standing.STRANGER, 8) == (Room.STRANGERS_FULL, None)
    assert room_for(strangers, "y", Standing.WANTED, 8) == (Room.FREE, None)


def test_links_that_never_answered_close_after_the_horizon() -> None:
    links = [
        Link("a", Standing.STRANGER, since=0.0),
        Link("b", Standing.WANTED, since=0.0),
        Link("c", Standing.WANTED, settled=True, since=0.0),
        Link("d", Standing.PROVEN, since=0.0),
        Link("e", Standing.STRANGER, since=9.0),
    ]
    assert [link.host for link in unanswered(5.0, links)] == ["a", "b", "d"]


def test_the_standing_of_listed_peers_follows_what_we_want() -> None:
    table = PeerTable(ALICE.public_key)
    table.heard(beacon(BOB, tables=CLUB), "b", now=0.0)
    assert table.peers()[0].standing is Standing.STRANGER
    assert table.want(["club"]) and table.peers()[0].standing is Standing.WANTED
    assert not table.want(["club"])  # the same names: nothing changed
    assert table.want([]) and table.peers()[0].standing is Standing.STRANGER


def test_rate_limiter() -> None:
    limiter = RateLimiter(limit=3, window=1.0, max_sources=2)
    assert [limiter.allow("a", 0.1 * i) for i in range(5)] == [True, True, True, False, False]
    assert limiter.allow("b", 0.5)
    assert not limiter.allow("c", 0.6)  # two sources tracked already
    assert limiter.allow("a", 1.0)  # a new window
    assert limiter.allow("c", 1.6)  # b's window is over: room again


# --- Discovery on loopback ------------------------------------------------------------------

INTERVAL = 0.2


def announcing(name: str, port: int) -> Callable[[], Announcement]:
    return lambda: Announcement(name, port)


def on_loopback(
    identity: Identity,
    announce: Callable[[], Announcement],
    interval: float = INTERVAL,
    expiry: float | None = None,
) -> Discovery:
    """An endpoint on its own ephemeral port of 127.0.0.1 that only sends to its targets."""
    return Discovery(
        identity,
        announce,
        port=0,
        host="127.0.0.1",
        interval=interval,
        expiry=expiry,
        broadcast=False,
    )


async def eventually(predicate: Callable[[], bool], timeout: float = 5.0) -> float:
    """Wait until ``predicate()``; return how long it took."""
    started = time.monotonic()
    while not predicate():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"not true after {timeout} s")
        await asyncio.sleep(0.02)
    return time.monotonic() - started


def names_of(peers: list[Peer]) -> set[str]:
    return {peer.name for peer in peers}


@pytest.mark.daemons
def test_three_daemons_find_each_other_by_loopback_broadcast() -> None:
    """Three endpoints share one port (SO_REUSEPORT) and beacon to 127.255.255.255, as
    daemons on one LAN share the discovery port and beacon to the broadcast address."""

    async def scenario() -> None:
        identities = [ALICE, BOB, CAROL]
        changes: list[set[str]] = []
        first = Discovery(
            ALICE, announcing("alice", 6000), port=0, interval=INTERVAL, expiry=5.0, broadcast=False
        )
        first.on_change(lambda peers: changes.append(names_of(peers)))
        await first.start()
        port = first.address[1]
        first.add_target("127.255.255.255", port)
        others = [
            Discovery(
                identity,
                announcing(name, 6000 + i),
                port=port,
                interval=INTERVAL,
                expiry=5.0,
                broadcast=False,
                targets=[("127.255.255.255", port)],
            )
            for i, (identity, name) in enumerate(zip(identities[1:], ["bob", "carol"]), start=1)
        ]
        for other in others:
            await other.start()
        everyone = [first, *others]
        await eventually(lambda: all(len(d.peers()) == 2 for d in everyone))
        assert names_of(first.peers()) == {"bob", "carol"}
        assert {(p.name, p.host, p.port) for p in others[0].peers()} == {
            ("alice", "127.0.0.1", 6000),
            ("carol", "127.0.0.1", 6002),
        }
        assert changes[-1] == {"bob", "carol"}
        # Carol leaves: she says goodbye and is gone before the expiry could have removed her
        # (5 s after her last beacon, sent at most INTERVAL before she left: 4.8 s at the soonest).
        await others[1].close()
        await eventually(lambda: names_of(first.peers()) == {"bob"}, timeout=4.0)
        await eventually(lambda: names_of(others[0].peers()) == {"alice"}, timeout=1.0)
        assert changes[-1] == {"bob"}
        assert first.stats.malformed == 0 and first.stats.rate_limited == 0
        await others[0].close()
        await first.close()

    asyncio.run(scenario())


@pytest.mark.daemons
def test_unicast_targets_and_current_announcement() -> None:
    """Two endpoints on their own ephemeral ports, each told the other's: the way beacons
    cross a router to a static peer.  What is announced is asked for at every beacon."""

    async def scenario() -> None:
        tables: list[TableInfo] = []

        def current() -> Announcement:
            return Announcement("alice", 7000, tuple(tables))

        alice = on_loopback(ALICE, current)
        bob = on_loopback(BOB, announcing("bob", 7001))
        async with alice, bob:
            alice.add_target("127.0.0.1", bob.address[1])
            bob.add_target("127.0.0.1", alice.address[1])
            await eventually(
                lambda: names_of(alice.peers()) == {"bob"} and names_of(bob.peers()) == {"alice"}
            )
            assert bob.peers()[0].endpoint == "tcp://127.0.0.1:7000"
            tables.append(TableInfo("salon", 4, 1, True, TABLE_ID))
            await eventually(
                lambda: bob.peers()[0].tables == (TableInfo("salon", 4, 1, True, TABLE_ID),)
            )

    asyncio.run(scenario())


@contextmanager
def raw_socket() -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    try:
        yield sock
    finally:
        sock.close()


@pytest.mark.daemons
def test_a_silent_peer_expires() -> None:
    """BOB beacons once, from a plain socket, then falls silent without a goodbye (a
    crash, a pulled cable): he is forgotten after the expiry, not before."""

    async def scenario() -> None:
        seen: list[set[str]] = []
        alice = on_loopback(ALICE, announcing("alice", 7000), interval=0.1, expiry=0.6)
        alice.on_change(lambda peers: seen.append(names_of(peers)))
        async with alice:
            with raw_socket() as sock:
                sock.sendto(
                    encode_beacon(beacon(BOB, name="bob", timestamp=int(time.time())), BOB),
                    alice.address,
                )
                await eventually(lambda: names_of(alice.peers()) == {"bob"}, timeout=1.0)
                took = await eventually(lambda: alice.peers() == [], timeout=3.0)
        assert took > 0.45  # not before the expiry (0.6 s after bob was last heard)
        assert seen == [{"bob"}, set()]

    asyncio.run(scenario())


@pytest.mark.daemons
def test_malformed_datagrams_are_counted_and_floods_rate_limited() -> None:
    async def scenario() -> None:
        alice = on_loopback(ALICE, announcing("alice", 7000))  # the default limit: 20 a second
        async with alice:
            with raw_socket() as sock:
                for i in range(60):
                    sock.sendto(b"TAROT\x01 garbage %d" % i, alice.address)
                await eventually(
                    lambda: alice.stats.malformed + alice.stats.rate_limited == 60, timeout=2.0
                )
                assert alice.stats.malformed == 20
                assert alice.stats.rate_limited == 40
                await asyncio.sleep(1.0)  # a new window: the same source is heard again
                sock.sendto(
                    encode_beacon(beacon(BOB, name="bob", timestamp=int(time.time())), BOB),
                    alice.address,
                )
                await eventually(lambda: names_of(alice.peers()) == {"bob"}, timeout=1.0)

    asyncio.run(scenario())


@pytest.mark.daemons
def test_the_beacon_loop_survives_a_failing_announcement(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        calls = 0

        def flaky() -> Announcement:
            nonlocal calls
            calls += 1
            if calls == 1:
                raise RuntimeError("not ready")
            return Announcement("alice", 7000)

        alice = on_loopback(ALICE, flaky, interval=0.05)
        bob = on_loopback(BOB, announcing("bob", 7001))
        async with bob, alice:
            alice.add_target("127.0.0.1", bob.address[1])
            await eventually(lambda: names_of(bob.peers()) == {"alice"}, timeout=2.0)

    asyncio.run(scenario())
    assert "could not send a discovery beacon" in caplog.text


def test_targets_are_ip_addresses_and_address_needs_a_start() -> None:
    discovery = Discovery(ALICE, announcing("alice", 7000), broadcast=False)
    with pytest.raises(ValueError):
        discovery.add_target("localhost", 47474)
    with pytest.raises(RuntimeError, match="not started"):
        _ = discovery.address


@pytest.mark.daemons
def test_broadcast_addresses_skip_loopback() -> None:
    """Reads the interfaces only; nothing is sent."""
    addresses = broadcast_addresses()
    for address in addresses:
        parsed = ipaddress.IPv4Address(address)
        assert not parsed.is_loopback
    assert len(set(addresses)) == len(addresses)


@pytest.mark.parametrize(
    "address, netmask, broadcast",
    [
        ("10.9.0.1", "255.255.255.0", "10.9.0.255"),
        ("172.16.5.9", "255.255.0.0", "172.16.255.255"),
        ("192.168.1.7", "255.255.255.252", "192.168.1.7"),  # a /30: .4–.7, .7 the broadcast
        ("10.0.0.1", "255.255.255.254", None),  # a /31 point-to-point link: none
        ("10.0.0.1", "255.255.255.255", None),
        ("10.0.0.1", "255.0.255.0", None),  # holes: no subnet
    ],
)
def test_the_broadcast_address_of_a_subnet_comes_from_its_netmask(
    address: str, netmask: str, broadcast: str | None
) -> None:
    assert subnet_broadcast(address, netmask) == broadcast


@pytest.mark.daemons
def test_an_address_added_without_brd_gets_the_broadcast_of_its_subnet() -> None:
    """``ip addr add 10.9.0.1/24 dev v0``, no ``brd``: the kernel reports 0.0.0.0 as its
    broadcast address, and the daemon sent no beacon on that LAN at all.  In a network
    namespace of its own, so the machine's interfaces are neither seen nor touched."""
    setup = (
        "ip link add v0 type veth peer name v1 && ip addr add 10.9.0.1/24 dev v0 && ip link set "
        "v0 up && "
        "ip link add v2 type veth peer name v3 && ip addr add 10.8.0.1/16 brd 10.8.255.255 dev v2 "
        "&& ip link set v2 up"
    )
    try:
        made = subprocess.run(
            ["unshare", "--net", "sh", "-c", setup], capture_output=True, text=True, timeout=30
        )
    except FileNotFoundError:
        pytest.skip("no unshare here")
    if made.returncode != 0:
        pytest.skip(f"no network namespace with veth interfaces here: {made.stderr.strip()}")
    probe = (
        f"{setup} && exec {shlex.quote(sys.executable)} -c "
        "'from tarotd.discovery import broadcast_addresses; print(broadcast_addresses())'"
    )
    found = subprocess.run(
        ["unshare", "--net", "sh", "-c", probe],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=ROOT,
        check=True,
    )
    assert found.stdout.strip() == "['10.9.0.255', '10.8.255.255']"


@pytest.mark.daemons
def test_discovery_says_once_that_it_reaches_no_network_and_once_that_it_does_again(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """With no interface to broadcast on, the daemon used to beacon into nothing without a
    word: now one warning however many beacons go nowhere, one line when a network is back."""
    interfaces: list[str] = []
    monkeypatch.setattr("tarotd.discovery.endpoint.broadcast_addresses", lambda: list(interfaces))

    async def scenario() -> None:
        discovery = Discovery(
            ALICE, announcing("alice", 7000), port=0, host="127.0.0.1", interval=0.02
        )
        async with discovery:
            await asyncio.sleep(0.2)
            interfaces.append("127.255.255.255")
            await asyncio.sleep(0.1)

    with caplog.at_level(logging.INFO, logger="tarotd.discovery"):
        asyncio.run(scenario())
    lines = [record.getMessage() for record in caplog.records]
    assert sum("reaches no network" in line for line in lines) == 1, lines
    assert (
        sum("reaches a network again: beacons to 127.255.255.255" in line for line in lines) == 1
    ), lines


def test_tarot_status_shows_what_discovery_refused_apart(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tarot status`` says what a beacon flood cost (``discovery_refused``), apart from the
    other refusals, and not twice."""
    from client import status_cmd
    from client.cli import build_parser

    flooded = {"discovery-strangers-full": 10621, "links-unanswered": 158}
    status = {
        "name": "moi",
        "fingerprint": "aaaa-bbbb",
        "endpoint": "tcp://127.0.0.1:1",
        "curve": True,
        "key": "k",
        "peers": [],
        "refused": {"new-keys": 3, **flooded},
        "discovery_refused": flooded,
        "tables": [],
    }

    async def ask(home: object, op: str, **params: object) -> object:
        return status

    monkeypatch.setattr(status_cmd, "ask", ask)
    assert status_cmd.run(build_parser().parse_args(["--home", "/tmp/h", "status"])) == 0
    out = capsys.readouterr().out
    assert "refused from the network: new-keys 3\n" in out, out
    assert "discovery refused: discovery-strangers-full 10621, links-unanswered 158" in out, out


@given(
    st.lists(
        st.tuples(st.sampled_from(list(Standing)), st.sampled_from(["a", "b", "c", "d"])),
        max_size=12,
    ),
    st.sampled_from(list(Standing)),
    st.sampled_from(["a", "b", "e"]),
    st.integers(1, 12),
)
def test_the_census_says_what_room_for_says(
    held: list[tuple[Standing, str]], standing: Standing, host: str, total: int
) -> None:
    entries = [Link(h, s, since=float(n)) for n, (s, h) in enumerate(held)]
    room, victim = room_for(entries, host, standing, total)
    assert Census.of(entries).verdict(host, standing, total) is room
    assert (victim is not None) == (room is Room.EVICT)


def test_a_beacon_turned_away_costs_no_signature_check() -> None:
    """Once strangers hold their share, a stranger's beacon is turned away on what it claims,
    before its signature is checked: a flood of fresh keys costs a parse each, no more.  A
    listed key, a goodbye and a wanted table's beacon always go on to the check."""
    table = PeerTable(ALICE.public_key, max_peers=4)
    table.want(["club"])
    for n in range(3):
        table.heard(beacon(Identity.generate(), tables=()), f"h{n}", now=0.0)
    listed = table.peers()[0]
    stranger = beacon(Identity.generate(), tables=())
    assert table.turns_away(stranger, "h9") is Room.STRANGERS_FULL
    assert table.turns_away(beacon(BOB, tables=CLUB), "b") is None
    assert table.turns_away(beacon(CAROL, tables=(), goodbye=True), "c") is None
    refresh = Beacon(listed.name, listed.key, 5555, (), False, NOW + 1)
    assert table.turns_away(refresh, listed.host) is None
    assert len(table.peers()) == 3  # asking changed nothing


@pytest.mark.daemons
def test_a_flood_refused_by_the_census_takes_no_signature_check_on_the_endpoint() -> None:
    """Through the endpoint: a stranger's datagram with a broken signature, while strangers
    hold their share, is counted as refused for room (it was never checked), and while there
    is room, as malformed."""

    async def test() -> None:
        async with on_loopback(ALICE, announcing("alice", 5555)) as alice:
            alice._table.max_peers = 4  # three strangers fill their share
            sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            try:
                for seed in range(3, 7):
                    stranger = Identity.from_private_bytes(bytes([seed]) * 32)
                    datagram = encode_beacon(beacon(stranger, tables=()), stranger)
                    if seed == 6:  # the fourth: its signature broken
                        datagram = datagram[:-1] + bytes([datagram[-1] ^ 1])
                    sender.sendto(datagram, alice.address)
                await eventually(lambda: alice.stats.received == 4)
                assert len(alice.peers()) == 3 and alice.stats.malformed == 0
                assert alice.refusals.counts() == {"discovery-strangers-full": 1}
                alice._table.max_peers = 8  # room again: now the check runs, and fails
                sender.sendto(datagram, alice.address)
                await eventually(lambda: alice.stats.received == 5)
                assert alice.stats.malformed == 1 and len(alice.peers()) == 3
            finally:
                sender.close()

    asyncio.run(test())


def test_the_daemon_links_the_best_standing_first_and_again_once_it_rose() -> None:
    """``PeerWatch.on_peers``: the peers discovery lists go to the mesh best first (the links it
    keeps for them are taken before strangers'), each once every ``RELINK_EVERY`` — but at once
    again when its standing rose (it named our table, or proved our code)."""
    from types import SimpleNamespace
    from typing import Any, cast

    from tarotd.status import PeerWatch

    offered: list[tuple[str, Standing]] = []

    def connect(endpoint: str, expected_key: bytes, standing: Standing) -> None:
        offered.append((endpoint.rpartition(":")[0].removeprefix("tcp://"), standing))

    mesh = SimpleNamespace(connect=connect)
    watch = cast(Any, SimpleNamespace(_offered={}, daemon=SimpleNamespace(mesh=mesh)))
    keys = [Identity.from_private_bytes(bytes([seed]) * 32).public_key for seed in range(3, 6)]
    standings = [Standing.STRANGER, Standing.PROVEN, Standing.WANTED]
    peers = [
        Peer(key, f"p{n}", f"h{n}", 5555, (), 0.0, standing)
        for n, (key, standing) in enumerate(zip(keys, standings, strict=True))
    ]
    PeerWatch.on_peers(watch, peers)
    assert offered == [("h1", Standing.PROVEN), ("h2", Standing.WANTED), ("h0", Standing.STRANGER)]
    offered.clear()
    PeerWatch.on_peers(watch, peers)
    assert offered == []  # offered a moment ago
    peers[0] = Peer(keys[0], "p0", "h0", 5555, CLUB, 0.0, Standing.WANTED)
    PeerWatch.on_peers(watch, peers)
    assert offered == [("h0", Standing.WANTED)]
