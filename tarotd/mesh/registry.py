"""The peers and links a mesh holds, and who may become one: a key that proved itself is
admitted within the bounds on keys no table needs; a link opens within the bounds on links;
what nobody needs and has been silent is forgotten.  The roles that receive
(:mod:`~tarotd.mesh.router`, :mod:`~tarotd.mesh.links`) ask it, and tell it whom they heard."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from protocol.replication.identity import fingerprint
from tarotd.mesh.bounds import (
    Room,
    Standing,
    refusal,
    room_for,
    room_from,
    silent_since,
    stranger_share,
    unanswered,
)
from tarotd.mesh.core import Inbound, Outbox, TokenBucket, liveness
from tarotd.mesh.records import Link, Peer, PeerStatus, Shared
from tarotd.refusals import Cause

log = logging.getLogger(__name__)

OnStatus = Callable[[PeerStatus], None]


class Registry:
    """Every peer by key, the peer behind each routing id that proved one, and our links by
    endpoint.  ``keeps(key)`` says whether a table needs a key: such a peer, and a link to
    it, is never refused for room nor forgotten."""

    def __init__(
        self, shared: Shared, keeps: Callable[[bytes], bool], on_status: OnStatus | None
    ) -> None:
        self.shared = shared
        self.peers: dict[bytes, Peer] = {}
        #: routing id → the peer that proved itself under it
        self.routes: dict[bytes, Peer] = {}
        self.links: dict[str, Link] = {}
        #: where the peers a table needs proved their keys from
        self.member_hosts: frozenset[str] = frozenset()
        self._keeps = keeps
        self._on_status = on_status
        limits = shared.limits
        self._new_keys = TokenBucket(limits.new_keys_rate, limits.new_keys_burst)

    def peer(self, key: bytes) -> Peer:
        """The record of ``key``, made if new."""
        peer = self.peers.get(key)
        if peer is None:
            bucket = TokenBucket(self.shared.limits.rate, self.shared.limits.burst)
            peer = self.peers[key] = Peer(key, Outbox(), Inbound(), bucket)
        return peer

    def keeps(self, key: bytes) -> bool:
        return self._keeps(key)

    def kept(self, peer: Peer) -> bool:
        return peer.kept or self._keeps(peer.key)

    def link_kept(self, link: Link) -> bool:
        return link.kept or (link.expected_key is not None and self._keeps(link.expected_key))

    def admits(self, key: bytes, host: str, kept: bool, now: float) -> bool:
        """Whether a key that proved itself may talk to us.  A known key may; an unknown one
        only within the bounds on keys no table needs (``Limits``): so many from one host
        (this machine's own address excepted: its daemons), so many per second from every host
        together, so many in all — a peer of those silent longest, and not up, makes room.
        The keys a table needs, and those on a kept link, are never refused for room."""
        shared = self.shared
        if key == shared.key:
            shared.stats.strangers += 1
            return False
        if key in self.peers or kept or self._keeps(key):
            return True
        loose = [peer for peer in self.peers.values() if not self.kept(peer)]
        limits = shared.limits
        refused = refusal(host, loose, limits.keys_per_host, limits.max_peers, self._new_keys, now)
        if refused is not None:
            shared.stats.strangers += 1
            cause, why = refused
            shared.refusals.refuse(
                cause,
                now,
                f"a HELLO signed by {fingerprint(key)} from {host or 'an unknown address'}: {why}",
            )
            return False
        if (oldest := room_from(loose, limits.max_peers)) is not None:
            self.forget(oldest)
        return True

    def room_for_link(self, endpoint: str, standing: Standing) -> bool:
        """Whether one more link no table needs may open (to ``endpoint``, for a key of
        ``standing``): four descriptors each, and a flood of beacons or HELLOs from fresh
        keys asks for one per key — so strangers hold a share at most, and a better link
        takes the place of a worse one (:func:`~tarotd.mesh.bounds.room_for`)."""
        total = self.shared.limits.links
        refusals = self.shared.refusals
        loose = [link for link in self.links.values() if not link.kept]
        host = endpoint.removeprefix("tcp://").rpartition(":")[0]
        room, victim = room_for(loose, host, standing, total)
        now = time.monotonic()
        if victim is not None:
            refusals.refuse(
                Cause.LINKS_EVICTED,
                now,
                f"the link to {victim.endpoint} closed for one to {endpoint}: {total} links no "
                "table needs are open, and it was a stranger's or its host the most crowded",
            )
            self.close_link(victim)
        if room is Room.STRANGERS_FULL:
            refusals.refuse(
                Cause.LINKS_STRANGERS_FULL,
                now,
                f"no link opened to {endpoint}: strangers hold the {stranger_share(total)} "
                "links they may, spread over their hosts",
            )
        elif room is Room.FULL:
            refusals.refuse(
                Cause.LINKS_FULL,
                now,
                f"no link opened to {endpoint}: {total} links no table needs are open already",
            )
        return room in (Room.FREE, Room.EVICT)

    def close_link(self, link: Link) -> None:
        if self.links.get(link.endpoint) is link:
            del self.links[link.endpoint]
        if link.peer is not None and link.peer.link is link:
            link.peer.link = None
        for task in (link.task, link.watch):
            if task is not None:
                task.cancel()
        link.close()

    def forget(self, peer: Peer) -> None:
        """Drop a peer no table needs, its link and everything we held for it.  Should it come
        back, it starts afresh: the delivery rules for a side that lost its state apply."""
        if peer.link is not None:
            self.close_link(peer.link)
        if peer.route is not None:
            self.routes.pop(peer.route, None)
        del self.peers[peer.key]

    def expire(self, now: float) -> None:
        """Forget the peers and links no table needs that have been silent, or never proved
        their key, for ``Limits.forget_after`` (see :meth:`~tarotd.mesh.Mesh.connect`); and
        note where the peers a table needs proved their keys from."""
        limits = self.shared.limits
        horizon = now - limits.forget_after
        for peer in silent_since(
            horizon, [peer for peer in self.peers.values() if not self.kept(peer)]
        ):
            self.forget(peer)
        loose = [link for link in self.links.values() if not self.link_kept(link)]
        for link in loose:
            if link.peer is None and link.opened < horizon:
                self.close_link(link)
        for link in unanswered(now - limits.unanswered_after, loose):  # dead ports
            if self.links.get(link.endpoint) is link:
                self.shared.refusals.refuse(
                    Cause.LINKS_UNANSWERED,
                    now,
                    f"the link to {link.endpoint} closed: nothing answered there for "
                    f"{limits.unanswered_after:g} s",
                )
                self.close_link(link)
        self.member_hosts = frozenset(
            peer.host for peer in self.peers.values() if peer.host and self.kept(peer)
        )

    def status(self, peer: Peer) -> PeerStatus:
        return PeerStatus(peer.key, peer.name, peer.endpoint, peer.reported, peer.last_heard_wall)

    def heard(self, peer: Peer, now: float) -> None:
        peer.last_heard = now
        peer.last_heard_wall = time.time()
        self.update_state(peer, now)

    def update_state(self, peer: Peer, now: float) -> None:
        state = liveness(peer.ever_up, peer.last_heard, now, self.shared.timeout)
        if state is not peer.reported:
            peer.reported = state
            if self._on_status is not None:
                try:
                    self._on_status(self.status(peer))
                except Exception:
                    self.shared.stats.errors += 1
                    log.exception("mesh callback %r failed", self._on_status)
