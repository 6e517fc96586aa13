"""Forming tables on the LAN, sans IO: offers, joins, the signed manifest, the first dealer.

A daemon *opens* a table (an offer: name, number of seats, a fresh id) and tells every peer;
others *join* it with the seats they host (a daemon may host several: its player and bots,
each with its own identity key).  The opener keeps the list of members in the order they
joined — it has no other power: once the table is full it sends the manifest (table id,
name, members in seat order with their daemons' endpoints), **every member signs it**, and
the first dealer is drawn by a commit-reveal coin that every member contributes to, so no
one chooses it.

Daemons started at the same moment with the same table name (``tarotd --table NAME``)
converge on one table: among the open offers with that name, the one with the smallest id
wins; an opener whose offer loses withdraws it and joins the winner, and so do its joiners.

Every frame is a msgpack-friendly dict with a ``t`` key; :meth:`Lobby.receive` checks its
shape and ignores anything malformed, so a peer can make the lobby do nothing worse than
refuse its frame.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgpack

from protocol.identity import Identity, verify
from protocol.public import TableSetup

ID_SIZE = 16
MAX_OFFERS = 64  #: offers of other daemons remembered at once
#: Frames to one daemon (its key) or to every known peer (``BROADCAST``).
BROADCAST = b""
MANIFEST_DOMAIN = b"tarot/v1/manifest\x00"
COIN_DOMAIN = b"tarot/v1/dealer-coin"


@dataclass(frozen=True)
class Member:
    key: bytes  #: the seat's identity key
    name: str
    daemon: bytes  #: key of the daemon that hosts the seat
    endpoint: str  #: that daemon's mesh endpoint

    def to_wire(self) -> list[object]:
        return [self.key, self.name, self.daemon, self.endpoint]


@dataclass
class Offer:
    table_id: bytes
    name: str
    seats: int
    opener: bytes
    members: list[Member] = field(default_factory=list)
    state: str = "open"  #: open → full (manifest out) → ready (signed, dealer drawn) | withdrawn

    @property
    def full(self) -> bool:
        return len(self.members) >= self.seats

    def to_wire(self) -> dict[str, Any]:
        return {
            "t": "offer",
            "table": self.table_id,
            "name": self.name,
            "seats": self.seats,
            "opener": self.opener,
            "members": [m.to_wire() for m in self.members],
            "state": self.state,
        }


@dataclass(frozen=True)
class ReadyTable:
    """A table every member signed, with its first dealer."""

    setup: TableSetup
    members: tuple[Member, ...]
    first_dealer: int
    manifest: bytes  #: the signed manifest, as every member signed it
    signatures: tuple[bytes, ...]
    name: str = ""


    def to_bytes(self) -> bytes:
        """What the daemon stores, to take the table up again after a restart."""
        return msgpack.packb(  # type: ignore[no-any-return]
            [self.manifest, list(self.signatures), self.first_dealer], use_bin_type=True
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> ReadyTable:
        manifest, signatures, dealer = msgpack.unpackb(data, raw=False)
        table_id, name, raw_members = msgpack.unpackb(manifest, raw=False)
        members = tuple(_member(raw) for raw in raw_members)
        for member, signature in zip(members, signatures, strict=True):
            if not verify(member.key, signature, MANIFEST_DOMAIN + manifest):
                raise ValueError(f"the manifest signature of {member.name} does not check")
        setup = TableSetup(_id(table_id), tuple(m.key for m in members), tuple(m.name for m in members))
        return cls(setup, members, int(dealer), manifest, tuple(signatures), _text(name))


Out = tuple[bytes, dict[str, Any]]  #: (destination daemon key or BROADCAST, frame)


def manifest_bytes(table_id: bytes, name: str, members: list[Member]) -> bytes:
    """The canonical manifest every member signs: seat order, keys, names and endpoints."""
    return msgpack.packb([table_id, name, [m.to_wire() for m in members]], use_bin_type=True)  # type: ignore[no-any-return]


def first_dealer(coins: list[bytes], players: int) -> int:
    """The dealer drawn from every member's revealed coin: no member can choose it alone."""
    digest = hashlib.sha256(COIN_DOMAIN + b"".join(coins)).digest()
    return int.from_bytes(digest, "big") % players


class Lobby:
    def __init__(
        self, daemon_key: bytes, endpoint: str, seats: list[tuple[Identity, str]], entropy: Callable[[int], bytes] = os.urandom
    ) -> None:
        """``seats``: the identities this daemon hosts, with the names shown to players.
        ``entropy``: where table ids and dealer coins come from — the OS, but for a test's
        ``tarotd --deal-seed``, which must form the same table on every run."""
        self.daemon_key = daemon_key
        self._entropy = entropy
        self.endpoint = endpoint
        self.hosted = {identity.public_key: (identity, name) for identity, name in seats}
        self.offers: dict[bytes, Offer] = {}
        self.wanted: tuple[str, int] | None = None
        self.joined: bytes | None = None  #: the offer our seats are in
        self._coins: dict[bytes, bytes] = {}  #: our secret coin per table
        self._signatures: dict[bytes, dict[bytes, bytes]] = {}  #: table → member → signature
        self._commits: dict[bytes, dict[bytes, bytes]] = {}  #: table → member → H(coin)
        self._reveals: dict[bytes, dict[bytes, bytes]] = {}
        self._ready: list[ReadyTable] = []
        self._early: dict[bytes, list[tuple[bytes, dict[str, Any]]]] = {}  #: frames before the manifest

    # --- What the daemon asks ------------------------------------------------------

    def members_here(self) -> list[Member]:
        return [Member(key, name, self.daemon_key, self.endpoint) for key, (_, name) in self.hosted.items()]

    def open(self, name: str, seats: int) -> list[Out]:
        if seats not in (3, 4, 5):
            raise ValueError("a table has 3, 4 or 5 seats")
        table_id = hashlib.sha256(b"tarot/v1/table" + self.daemon_key + self._entropy(16)).digest()[:ID_SIZE]
        offer = Offer(table_id, name, seats, self.daemon_key, self.members_here()[:seats])
        self.offers[table_id] = offer
        self.joined = table_id
        return self._after_change(offer)

    def want(self, name: str, seats: int) -> list[Out]:
        """Join the table of this name (opening it if nobody has): ``tarotd --table``."""
        self.wanted = (name, seats)
        return self._pursue()

    def join(self, table_id: bytes) -> list[Out]:
        offer = self.offers.get(table_id)
        if offer is None or offer.state != "open":
            raise ValueError("no open table with this id")
        self.joined = table_id
        return [(offer.opener, {"t": "join", "table": table_id, "members": [m.to_wire() for m in self.members_here()]})]

    def filling(self) -> Offer:
        """The table we joined, if it is still taking seats (ValueError saying why not)."""
        offer = self.offers.get(self.joined) if self.joined is not None else None
        if offer is None:
            raise ValueError("open or join a table first: a bot takes a seat at a table that is filling")
        if offer.state != "open" or offer.full:
            raise ValueError("the table is full: a bot takes a seat at a table that is filling")
        return offer

    def add_seat(self, identity: Identity, name: str) -> list[Out]:
        """Host one more seat (a bot) and sit it at the table we joined, while it is open."""
        offer = self.filling()
        self.hosted[identity.public_key] = (identity, name)
        member = Member(identity.public_key, name, self.daemon_key, self.endpoint)
        if offer.opener == self.daemon_key:
            offer.members.append(member)
            return self._after_change(offer)
        return [(offer.opener, {"t": "join", "table": offer.table_id, "members": [member.to_wire()]})]

    def leave(self) -> list[Out]:
        """Take our seats back from the table we joined, while it has not started; an offer of
        ours is withdrawn."""
        if self.joined is None:
            return []
        offer, self.joined = self.offers[self.joined], None
        if offer.state != "open":
            raise ValueError("the table has started: it can no longer be left")
        if offer.opener == self.daemon_key:
            offer.state = "withdrawn"
            return [(BROADCAST, offer.to_wire())]
        return [(offer.opener, {"t": "leave", "table": offer.table_id, "keys": list(self.hosted)})]

    def announcements(self) -> list[Out]:
        """Our open offers, to repeat now and then (peers that came late learn them)."""
        return [(BROADCAST, o.to_wire()) for o in self.offers.values() if o.opener == self.daemon_key and o.state == "open"]

    def take_ready(self) -> list[ReadyTable]:
        ready, self._ready = self._ready, []
        return ready

    def tables(self) -> list[Offer]:
        return sorted(self.offers.values(), key=lambda o: (o.name, o.table_id))

    # --- Frames from peers ---------------------------------------------------------

    def receive(self, sender: bytes, frame: object) -> list[Out]:
        if not isinstance(frame, dict):
            return []
        try:
            handler = _HANDLERS.get(frame.get("t"))  # type: ignore[arg-type]
            return handler(self, sender, frame) if handler else []
        except (KeyError, TypeError, ValueError):
            return []  # a malformed frame changes nothing

    def _on_offer(self, sender: bytes, frame: dict[str, Any]) -> list[Out]:
        table_id, name, seats = _id(frame["table"]), _text(frame["name"]), frame["seats"]
        if sender != frame["opener"] or type(seats) is not int or seats not in (3, 4, 5):
            return []
        members = [_member(raw) for raw in frame["members"]]
        state = _text(frame["state"])
        offer = self.offers.get(table_id)
        if offer is None:
            self._forget_stale_offers()
            self.offers[table_id] = Offer(table_id, name, seats, sender, members, state)
        elif offer.opener == sender and offer.state == "open" and state in ("open", "withdrawn"):
            offer.members, offer.state = members, state  # the manifest, not an offer, closes it
        if self.offers[table_id].state == "withdrawn" and self.joined == table_id:
            self.joined = None
        return self._pursue()

    def _on_join(self, sender: bytes, frame: dict[str, Any]) -> list[Out]:
        offer = self.offers.get(_id(frame["table"]))
        if offer is None or offer.opener != self.daemon_key or offer.state != "open":
            return []
        for member in (_member(raw) for raw in frame["members"]):
            known = {m.key for m in offer.members}
            if member.daemon == sender and member.key not in known and not offer.full:
                offer.members.append(member)
        return self._after_change(offer)

    def _on_leave(self, sender: bytes, frame: dict[str, Any]) -> list[Out]:
        offer = self.offers.get(_id(frame["table"]))
        if offer is None or offer.opener != self.daemon_key or offer.state != "open":
            return []
        leaving = {bytes(key) for key in frame["keys"]}
        offer.members = [m for m in offer.members if not (m.key in leaving and m.daemon == sender)]
        return self._after_change(offer)

    def _on_manifest(self, sender: bytes, frame: dict[str, Any]) -> list[Out]:
        table_id = _id(frame["table"])
        offer = self.offers.get(table_id)
        if offer is None or sender != offer.opener or table_id != self.joined:
            return []  # we sign only the table our seats joined
        if offer.state not in ("open", "withdrawn"):
            return []
        offer.members = [_member(raw) for raw in frame["members"]]
        offer.state = "full"
        out = self._sign(offer)
        for early_sender, early in self._early.pop(table_id, []):
            out += self.receive(early_sender, early)
        return out

    def _forget_stale_offers(self) -> None:
        """Keep at most :data:`MAX_OFFERS` offers heard: a flood of offers is not a memory leak."""
        others = [t for t, o in self.offers.items() if t != self.joined and o.opener != self.daemon_key]
        for table_id in others[: max(0, len(others) - MAX_OFFERS + 1)]:
            del self.offers[table_id]
            self._early.pop(table_id, None)

    def _wait_for_manifest(self, sender: bytes, frame: dict[str, Any]) -> list[Out]:
        """A signature or a coin may overtake the manifest (it comes from another daemon)."""
        waiting = self._early.setdefault(_id(frame["table"]), [])
        if len(waiting) < 64:
            waiting.append((sender, frame))
        return []

    def _on_sign(self, sender: bytes, frame: dict[str, Any]) -> list[Out]:
        table_id, key = _id(frame["table"]), bytes(frame["key"])
        offer = self.offers.get(table_id)
        if offer is None:
            return []
        if offer.state in ("open", "withdrawn"):
            return self._wait_for_manifest(sender, frame)
        if offer.state != "full":
            return []
        member = next((m for m in offer.members if m.key == key and m.daemon == sender), None)
        signature = bytes(frame["sig"])
        if member is None or not verify(key, signature, MANIFEST_DOMAIN + manifest_bytes(table_id, offer.name, offer.members)):
            return []
        self._signatures.setdefault(table_id, {})[key] = signature
        self._commits.setdefault(table_id, {})[key] = bytes(frame["commit"])
        return self._reveal_if_signed(offer)

    def _on_coin(self, sender: bytes, frame: dict[str, Any]) -> list[Out]:
        table_id, key, coin = _id(frame["table"]), bytes(frame["key"]), bytes(frame["coin"])
        offer = self.offers.get(table_id)
        if offer is None:
            return []
        if offer.state in ("open", "withdrawn"):
            return self._wait_for_manifest(sender, frame)
        commits = self._commits.get(table_id, {})
        if key not in commits or hashlib.sha256(coin).digest() != commits[key]:
            return []
        if not any(m.key == key and m.daemon == sender for m in offer.members):
            return []
        self._reveals.setdefault(table_id, {})[key] = coin
        self._ready_if_revealed(offer)
        return []

    # --- Our side of the protocol ----------------------------------------------------

    def _pursue(self) -> list[Out]:
        """Converge on the wanted table: the open offer of that name with the smallest id."""
        if self.wanted is None:
            return []
        name, seats = self.wanted
        if self.joined is not None and self.offers[self.joined].state in ("full", "ready"):
            return []
        candidates = sorted(
            o.table_id for o in self.offers.values() if o.name == name and o.seats == seats and o.state == "open"
        )
        if not candidates:
            return self.open(name, seats) if self.joined is None else []
        best = candidates[0]
        if self.joined == best:
            return []
        return self.leave() + self.join(best)

    def _after_change(self, offer: Offer) -> list[Out]:
        out: list[Out] = [(BROADCAST, offer.to_wire())]
        if offer.full and offer.state == "open" and offer.opener == self.daemon_key:
            offer.state = "full"
            frame = {"t": "manifest", "table": offer.table_id, "members": [m.to_wire() for m in offer.members]}
            out += [(daemon, frame) for daemon in _daemons(offer) if daemon != self.daemon_key]
            out += self._sign(offer)
        return out

    def _sign(self, offer: Offer) -> list[Out]:
        """Each seat hosted here signs the manifest and commits to a coin for the dealer."""
        document = MANIFEST_DOMAIN + manifest_bytes(offer.table_id, offer.name, offer.members)
        coin = self._coins.setdefault(offer.table_id, self._entropy(32))
        out: list[Out] = []
        for member in offer.members:
            if member.key in self.hosted:
                identity, _ = self.hosted[member.key]
                signature = identity.sign(document)
                commit = hashlib.sha256(coin + member.key).digest()
                self._signatures.setdefault(offer.table_id, {})[member.key] = signature
                self._commits.setdefault(offer.table_id, {})[member.key] = commit
                frame = {"t": "sign", "table": offer.table_id, "key": member.key, "sig": signature, "commit": commit}
                out += [(daemon, frame) for daemon in _daemons(offer) if daemon != self.daemon_key]
        return out + self._reveal_if_signed(offer)

    def _reveal_if_signed(self, offer: Offer) -> list[Out]:
        signatures = self._signatures.get(offer.table_id, {})
        if len(signatures) < offer.seats or offer.table_id not in self._coins:
            return []
        coin = self._coins[offer.table_id]
        out: list[Out] = []
        for member in offer.members:
            if member.key in self.hosted and member.key not in self._reveals.get(offer.table_id, {}):
                revealed = coin + member.key
                self._reveals.setdefault(offer.table_id, {})[member.key] = revealed
                frame = {"t": "coin", "table": offer.table_id, "key": member.key, "coin": revealed}
                out += [(daemon, frame) for daemon in _daemons(offer) if daemon != self.daemon_key]
        self._ready_if_revealed(offer)
        return out

    def _ready_if_revealed(self, offer: Offer) -> None:
        reveals = self._reveals.get(offer.table_id, {})
        if offer.state != "full" or len(reveals) < offer.seats:
            return
        if len(self._signatures.get(offer.table_id, {})) < offer.seats:
            return
        offer.state = "ready"
        members = tuple(offer.members)
        setup = TableSetup(offer.table_id, tuple(m.key for m in members), tuple(m.name for m in members))
        dealer = first_dealer([reveals[m.key] for m in members], offer.seats)
        signatures = tuple(self._signatures[offer.table_id][m.key] for m in members)
        manifest = manifest_bytes(offer.table_id, offer.name, list(members))
        if any(m.key in self.hosted for m in members):
            self._ready.append(ReadyTable(setup, members, dealer, manifest, signatures, offer.name))


def _daemons(offer: Offer) -> list[bytes]:
    return list(dict.fromkeys(m.daemon for m in offer.members))


def _id(value: object) -> bytes:
    if not isinstance(value, bytes) or len(value) != ID_SIZE:
        raise ValueError("a table id is 16 bytes")
    return value


def _text(value: object) -> str:
    if not isinstance(value, str) or len(value) > 64:
        raise ValueError("a name is a string of at most 64 characters")
    return value


def _member(raw: object) -> Member:
    if not isinstance(raw, list) or len(raw) != 4:
        raise ValueError("a member is [key, name, daemon, endpoint]")
    key, name, daemon, endpoint = raw
    if not (isinstance(key, bytes) and len(key) == 32 and isinstance(daemon, bytes) and len(daemon) == 32):
        raise ValueError("member keys are 32 bytes")
    if not isinstance(endpoint, str) or len(endpoint) > 128:
        raise ValueError("an endpoint is a short string")
    return Member(key, _text(name), daemon, endpoint)


_HANDLERS = {
    "offer": Lobby._on_offer,
    "join": Lobby._on_join,
    "leave": Lobby._on_leave,
    "manifest": Lobby._on_manifest,
    "sign": Lobby._on_sign,
    "coin": Lobby._on_coin,
}
