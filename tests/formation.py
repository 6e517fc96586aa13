"""One deterministic formation of a table through four lobbies, every lobby frame kind on the
wire: the opener hosting two seats, a joiner proving the invite code (knock, answer, prove,
proven), leaving and joining again, a stranger knocking with a wrong code (refused), a third
daemon filling the table (manifest, sign, seal, coin, the coins relayed at the heartbeats).

Identities, entropy and CPace's secrets are fixed and delivery is first in, first out, so the
same code sends the same bytes on every run.  It uses only what every version of the lobby has
(:class:`~tarotd.lobby.Lobby` and its public calls), so that the bytes of one version can be
compared with another's (tests/test_lobby_frames.py) and each frame delivered can be preceded
by hostile variants of it (tests/test_lobby_hostile.py).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

import msgpack

from protocol.replication.identity import Identity
from tarotd.lobby import BROADCAST, FrameOut, Lobby

#: Called with (sender, target, the frame as the target unpacks it) before it is delivered.
Tap = Callable[[bytes, Lobby, dict[str, object]], None]


@dataclass
class Formation:
    lobbies: list[Lobby]
    sent: list[bytes] = field(default_factory=list)  #: every frame sent, packed, in order
    ready: list[int] = field(default_factory=list)  #: tables ready, per lobby


def lobby(n: int, seats: int) -> Lobby:
    """Daemon ``n`` hosting ``seats`` seats, its keys and randomness fixed by ``n``."""
    daemon = Identity.from_private_bytes(bytes([n]) * 32)
    hosted = [
        (Identity.from_private_bytes(bytes([n, k + 1]) * 16), f"p{n}-{k}") for k in range(seats)
    ]
    entropy, secrets = random.Random(n), random.Random(100 + n)
    return Lobby(
        daemon.public_key,
        f"tcp://127.0.0.1:{9000 + n}",
        hosted,
        entropy.randbytes,
        secrets=secrets.randbytes,
    )


def form(tap: Tap | None = None) -> Formation:
    opener, joiner, third, stranger = lobby(1, 2), lobby(2, 1), lobby(3, 1), lobby(4, 1)
    formation = Formation([opener, joiner, third, stranger])
    by_key = {x.daemon_key: x for x in formation.lobbies}
    queue: list[tuple[bytes, bytes, bytes]] = []

    def post(sender: bytes, outs: list[FrameOut]) -> None:
        for destination, frame in outs:
            body = msgpack.packb(frame, use_bin_type=True)
            formation.sent.append(body)
            targets = (
                [k for k in by_key if k != sender] if destination == BROADCAST else [destination]
            )
            queue.extend((sender, target, body) for target in targets)

    def run() -> None:
        while queue:
            sender, target, body = queue.pop(0)
            if tap is not None:
                tap(sender, by_key[target], msgpack.unpackb(body, raw=False))
            post(target, by_key[target].receive(sender, msgpack.unpackb(body, raw=False)))

    post(opener.daemon_key, opener.open("club", 4))
    run()
    (table,) = joiner.offers
    invite = opener.offers[table].invite
    assert invite is not None
    post(stranger.daemon_key, stranger.join(table, "H4NP-3WRC"))  # not the code: refused
    run()
    post(joiner.daemon_key, joiner.join(table, invite.shown))
    run()
    post(joiner.daemon_key, joiner.leave())
    run()
    post(joiner.daemon_key, joiner.join(table))  # proved already: trusted
    post(third.daemon_key, third.join(table, invite.shown))
    run()
    for now in (1.0, 2.0):  # the rounds of the coin: relays
        for x in formation.lobbies:
            post(x.daemon_key, x.heartbeat(now))
        run()
    formation.ready = [len(x.take_ready()) for x in formation.lobbies]
    return formation
