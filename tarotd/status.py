"""Peers and status: which daemons this one links to and trusts, what it tells discovery,
and the ``status`` document that shows it all.

The mesh links and forgets by itself; what it cannot know is which daemons a table needs (so
never to forget them), which discovered peers deserve a link first (the players' before a
flood of strangers'), and which ``--peer`` was mistyped rather than not started yet.  That
knowledge is the daemon's, gathered here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgpack

from protocol.localapi import Status
from protocol.replication.identity import fingerprint
from tarotd.channels import LOBBY
from tarotd.discovery import Announcement, TableInfo
from tarotd.discovery import Peer as DiscoveredPeer
from tarotd.event_desk import EventDesk
from tarotd.lobby import Lobby, Member, OfferState
from tarotd.mesh import WILDCARD_HOSTS, PeerState, PeerStatus
from tarotd.mesh.bounds import Standing
from tarotd.refusals import Cause
from tarotd.runner import TableRunner

if TYPE_CHECKING:
    from tarotd.daemon import Daemon

log = logging.getLogger("tarotd")

#: seconds between two offers of one discovered peer to the mesh (which forgets the silent)
RELINK_EVERY = 10.0
#: What discovery and the links it asks for refused (``discovery_refused`` in ``status``).
DISCOVERY_CAUSES = frozenset(
    cause.value
    for cause in (
        Cause.BEACONS_FROM_HOST,
        Cause.DISCOVERY_FULL,
        Cause.DISCOVERY_STRANGERS_FULL,
        Cause.DISCOVERY_EVICTED,
        Cause.LINKS_FULL,
        Cause.LINKS_STRANGERS_FULL,
        Cause.LINKS_EVICTED,
        Cause.LINKS_UNANSWERED,
    )
)


class PeerWatch:
    """The daemons this one trusts and needs, its offers to the mesh, and its ``status``."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        #: Of the --peer daemons: the lobby trusts them.
        self.keys: set[bytes] = {p.key for p in daemon.options.peers if p.key is not None}
        #: discovered key → offered to the mesh at, and at what standing
        self._offered: dict[bytes, tuple[float, Standing]] = {}
        self._unreachable_said: set[str] = set()  #: --peer endpoints said unreachable

    # --- Whom to link to ------------------------------------------------------------

    def learn_keys(self) -> None:
        """The keys the daemons at our ``--peer HOST:PORT`` addresses proved there (a peer
        given with its key is known from the start): the lobby trusts them — and, besides,
        whoever proves an invite code.  Kept for the run, so that a peer's later link
        elsewhere (it restarted under another address) does not undo it."""
        static = {peer.endpoint for peer in self.daemon.options.peers}
        self.keys.update(
            status.key for status in self.daemon.mesh.peers() if status.endpoint in static
        )

    def needed(self, key: bytes) -> bool:
        """Whether a table needs the daemon of ``key`` — a ``--peer``, a member of a table we
        play or are forming: the mesh never forgets it nor refuses it for room."""
        daemon = self.daemon
        runners = daemon.hosting.runners.values()
        if key in self.keys or any(key in runner.other_daemons() for runner in runners):
            return True
        events: EventDesk | None = getattr(daemon, "events", None)  # None while the mesh starts
        if events is not None and events.needs(key):
            return True
        lobby: Lobby | None = getattr(daemon, "lobby", None)  # None while the mesh starts
        joined = lobby.offers.get(lobby.joined) if lobby is not None and lobby.joined else None
        return joined is not None and any(member.daemon == key for member in joined.members)

    def connect_members(self, members: Sequence[Member]) -> None:
        """Keep links to the daemons of these members.  An endpoint on a wildcard address
        (``--listen 0.0.0.0:P``) says nothing of where that daemon is: it is reached through
        discovery or ``--peer``, which tell the mesh its real address."""
        own = self.daemon.identity.public_key
        for member in members:
            host = member.endpoint[len("tcp://") :].rpartition(":")[0]
            if member.daemon != own and host not in WILDCARD_HOSTS:
                self.daemon.mesh.connect(member.endpoint, expected_key=member.daemon, keep=True)

    def on_status(self, status: PeerStatus) -> None:
        """A peer came up: tell it about our open tables (it may have started after us)."""
        if status.state is PeerState.UP:
            log.info(
                "peer %s [%s] found at %s",
                status.name,
                fingerprint(status.key),
                (status.endpoint or "its own connection").removeprefix("tcp://"),
            )
            for _destination, frame in self.daemon.lobby.announcements():
                self.daemon.mesh.send(status.key, LOBBY, msgpack.packb(frame, use_bin_type=True))
        else:
            log.info("peer %s is %s", status.name, status.state.value)

    def on_peers(self, peers: list[DiscoveredPeer]) -> None:
        """Link to the peers discovery lists, each at most once every :data:`RELINK_EVERY`
        (or sooner once its standing rose): the list changes with every beacon of a new key,
        and offering the whole of it each time would make a beacon flood cost a pass over it
        per beacon (and count a refusal for every peer listed each time).  The best standing
        first: the mesh keeps its links for them before strangers."""
        now = time.monotonic()
        never = (float("-inf"), Standing.STRANGER)
        due = [
            peer
            for peer in peers
            if (offered := self._offered.get(peer.key, never))[0] + RELINK_EVERY <= now
            or peer.standing > offered[1]
        ]
        for peer in sorted(due, key=lambda peer: -peer.standing):
            self._offered[peer.key] = (now, peer.standing)
            self.daemon.mesh.connect(peer.endpoint, expected_key=peer.key, standing=peer.standing)
        if len(self._offered) > 4 * len(peers) + 64:  # keys discovery no longer lists
            listed = {peer.key for peer in peers}
            self._offered = {key: at for key, at in self._offered.items() if key in listed}

    def favour(self, key: bytes) -> None:
        """``key``'s daemon proved our invite code (the lobby's exchange): discovery lists it,
        and the mesh links to it, before strangers and before keys that only name our table
        in their beacons — which anyone can."""
        if self.daemon.discovery is not None:
            self.daemon.discovery.favour(key)

    def want_tables(self) -> None:
        """Tell discovery the names of the tables we opened, joined or look for: beacons that
        name one come before strangers' (a flood of fresh keys cannot keep a player out)."""
        discovery, lobby = self.daemon.discovery, self.daemon.lobby
        if discovery is None:
            return
        own = self.daemon.identity.public_key
        names = {
            offer.name
            for offer in lobby.tables()
            if offer.state is not OfferState.WITHDRAWN
            and (offer.opener == own or offer.table_id == lobby.joined)
        }
        if lobby.wanted is not None:
            names.add(lobby.wanted[0])
        discovery.want(names)

    def announcement(self) -> Announcement:
        """What our beacons say: our name, our mesh's port, and the tables of our lobby."""
        tables = tuple(
            TableInfo(
                o.name,
                o.seats,
                min(len(o.members), o.seats),
                o.state is OfferState.OPEN,
                o.table_id,
            )
            for o in self.daemon.lobby.tables()
            if o.state is not OfferState.WITHDRAWN
        )
        return Announcement(self.daemon.options.name, self.daemon.mesh.port, tables[:8])

    # --- Who is away ----------------------------------------------------------------------

    def away(self, runner: TableRunner) -> dict[int, float]:
        """The seats of members whose daemon is unreachable, with seconds since last heard."""
        now, peers = time.time(), {p.key: p for p in self.daemon.mesh.peers()}
        away: dict[int, float] = {}
        for seat, member in enumerate(runner.ready.members):
            peer = peers.get(member.daemon)
            if peer is not None and peer.state is not PeerState.UP:
                away[seat] = now - peer.last_heard if peer.last_heard is not None else 0.0
        return away

    def _unreachable(self) -> dict[str, float]:
        """The ``--peer`` endpoints no daemon has answered at for ``--timeout``,
        with the seconds."""
        options = self.daemon.options
        static = {peer.endpoint for peer in options.peers}
        return {
            e: s
            for e, s in self.daemon.mesh.unreachable().items()
            if e in static and s >= options.timeout
        }

    def say_unreachable(self) -> None:
        """Say once when a ``--peer`` cannot be reached, and once when it answers again: a
        mistyped address or key would otherwise look like a player who has not come yet."""
        down = self._unreachable()
        for endpoint in sorted(down.keys() - self._unreachable_said):
            log.warning(
                "--peer %s: no daemon has answered there for %.0f s — is it started, on this "
                "network, listening on that port, and is the key given for it its own (tarot "
                "status on that machine)?",
                endpoint.removeprefix("tcp://"),
                down[endpoint],
            )
        for endpoint in sorted(self._unreachable_said - down.keys()):
            log.info("--peer %s answers again", endpoint.removeprefix("tcp://"))
        self._unreachable_said = set(down)

    # --- The status document -------------------------------------------------------------

    def status(self) -> Status:
        daemon = self.daemon
        options, mesh, hosting = daemon.options, daemon.mesh, daemon.hosting
        return {
            "name": options.name,
            "fingerprint": fingerprint(daemon.identity.public_key),
            "key": daemon.identity.public_key.hex(),
            "curve": options.curve,
            "endpoint": mesh.endpoint,
            "peers": [
                {"name": p.name, "fingerprint": fingerprint(p.key), "state": p.state.value}
                for p in mesh.peers()
            ],
            "connections": mesh.connections(),
            "refused": self._refused(),
            "mesh": mesh.stats.counted(),
            "unreachable": sorted(
                endpoint.removeprefix("tcp://") for endpoint in self._unreachable()
            ),
            "discovery": None
            if daemon.discovery is None
            else {"reaching": daemon.discovery.reaching},
            "discovery_refused": self._discovery_refused(),
            "guesses": daemon.lobby.guesses.summary(),
            "tables": [
                {
                    "table": r.table_id.hex(),
                    "seats": list(r.ready.setup.names),
                    "deal": r.deal_number,
                    "stage": r.stage,
                    "scored": r.completed,
                    "waiting_for": sorted(r.waiting_for()),
                    "unsettled": r.unsettled,
                    "rows_awaited": hosting.rows_awaited(r),
                    "paused": hosting.pause_said(r),
                }
                for r in hosting.runners.values()
            ],
            "bots": {name: options.bot_level for _, name in daemon.seats[1:]},
        }

    def _refused(self) -> dict[str, int]:
        """What the mesh and discovery turned away, by cause (:mod:`tarotd.refusals`)."""
        counts = self.daemon.mesh.refusals.counts()
        if self.daemon.discovery is not None:
            counts.update(self.daemon.discovery.refusals.counts())
        return counts

    def _discovery_refused(self) -> dict[str, int]:
        """Of :meth:`_refused`, what a flood of beacons costs: beacons, entries and links."""
        return {cause: n for cause, n in self._refused().items() if cause in DISCOVERY_CAUSES}
