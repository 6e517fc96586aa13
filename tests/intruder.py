"""A stranger on the LAN for the lobby's tests against real daemons: a throw-away key that
speaks the mesh and the lobby's frames, as a hostile host would, with nothing of a daemon
behind it — no runner, no store.  It listens on 127.0.0.1, connects to the daemons it is
pointed at, encrypting to their keys as they do by default (they connect back, as to any
peer that says HELLO), repeats the offers it is told
to every daemon that comes up, keeps every lobby frame it receives, and can send a manifest,
signatures and coins of its own making.

It uses only what every version of the lobby has (:class:`~tarotd.lobby.Lobby` to make a
well-formed offer, :func:`~tarotd.lobby.manifest_bytes`), so that the same test runs against
the code before the lobby checked anything — and fails there.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from typing import Any

import msgpack

from protocol.replication.identity import Identity
from tarotd.lobby import MANIFEST_DOMAIN, Lobby, Member, manifest_bytes
from tarotd.mesh import Mesh, PeerState, PeerStatus

LOBBY = "lobby"  #: the daemon's lobby channel (tarotd/channels.py)


class Intruder:
    def __init__(
        self, port: int = 0, name: str = "intrus", identity: Identity | None = None
    ) -> None:
        """``port`` 0, unless a daemon must name it in its ``--peer``: the OS gives one at
        :meth:`start`."""
        #: given: a daemon's --peer names its key before it starts
        self.identity = identity or Identity.generate()
        self.key = self.identity.public_key
        self.endpoint = f"tcp://127.0.0.1:{port}"
        self.member = Member(self.key, name, self.key, self.endpoint)
        self.mesh = Mesh(
            self.identity,
            self.endpoint,
            on_message=self._on_message,
            on_status=self._on_status,
            name=name,
            curve=True,
        )
        #: (daemon, lobby frame), as they came
        self.received: list[tuple[bytes, dict[str, Any]]] = []
        self.offers: list[dict[str, Any]] = []  #: repeated to every daemon that comes up
        self.up: set[bytes] = set()  #: daemons whose link is up

    async def start(self, daemons: Sequence[tuple[str, str]]) -> None:
        """Listen, and connect to each daemon given as its endpoint and its key in hex."""
        await self.mesh.start()
        self.endpoint = self.mesh.endpoint
        self.member = Member(self.key, self.member.name, self.key, self.endpoint)
        for endpoint, key in daemons:
            self.mesh.connect(endpoint, bytes.fromhex(key))

    async def close(self) -> None:
        await self.mesh.close()

    # --- What it sends ------------------------------------------------------------------

    def offer(self, frame: dict[str, Any]) -> None:
        """Offer ``frame`` to every daemon up, and to each one that comes up later."""
        self.offers.append(frame)
        for daemon in self.up:
            self.send(daemon, frame)

    def offer_under(self, table: bytes, name: str, seats: int) -> dict[str, Any]:
        """An offer under the id ``table``, chosen rather than drawn, with a nonce and a proof
        that prove nothing: the issue's ``00…00``."""
        frame = {
            "t": "offer",
            "table": table,
            "name": name,
            "seats": seats,
            "opener": self.key,
            "members": [self.member.to_wire()],
            "state": "open",
            "nonce": os.urandom(16),
        }
        self.offer(frame)
        return frame

    def offer_opened(self, name: str, seats: int) -> dict[str, Any]:
        """An offer as the lobby makes it (its id derived as that lobby's version derives it)."""
        lobby = Lobby(self.key, self.endpoint, [(self.identity, self.member.name)])
        ((_, frame),) = [out for out in lobby.open(name, seats) if out[1]["t"] == "offer"]
        self.offer(frame)
        return frame

    def send(self, daemon: bytes, frame: dict[str, Any]) -> None:
        self.mesh.send(daemon, LOBBY, msgpack.packb(frame, use_bin_type=True))

    def seat(
        self, table: bytes, name: str, members: Sequence[Member], signers: Sequence[Identity]
    ) -> None:
        """Send ``members`` as the manifest of ``table`` to every other daemon in it, with the
        signatures, coin commitments and coins of ``signers`` (seats it holds the keys of)."""
        document = MANIFEST_DOMAIN + manifest_bytes(table, name, list(members))
        daemons = {m.daemon for m in members} - {self.key}
        frames: list[dict[str, Any]] = [
            {"t": "manifest", "table": table, "members": [m.to_wire() for m in members]}
        ]
        coins = []
        for signer in signers:
            coin = os.urandom(32)
            frames.append(
                {
                    "t": "sign",
                    "table": table,
                    "key": signer.public_key,
                    "sig": signer.sign(document),
                    "commit": hashlib.sha256(coin).digest(),
                }
            )
            coins.append({"t": "coin", "table": table, "key": signer.public_key, "coin": coin})
        for daemon in daemons:
            for frame in frames + coins:
                self.send(daemon, frame)

    # --- What it hears ------------------------------------------------------------------

    def joins(self, table: bytes | None = None) -> list[tuple[bytes, dict[str, Any]]]:
        """The joins it received (to ``table``, or to any)."""
        return [
            (d, f)
            for d, f in self.received
            if f.get("t") == "join" and table in (None, f.get("table"))
        ]

    def heard_offers(self) -> list[dict[str, Any]]:
        return [f for _, f in self.received if f.get("t") == "offer"]

    async def _on_message(self, peer: bytes, channel: str, body: bytes) -> None:
        if channel == LOBBY:
            frame = msgpack.unpackb(body, raw=False)
            if isinstance(frame, dict):
                self.received.append((peer, frame))

    def _on_status(self, status: PeerStatus) -> None:
        if status.state is PeerState.UP and status.key not in self.up:
            self.up.add(status.key)
            for frame in self.offers:
                self.send(status.key, frame)
