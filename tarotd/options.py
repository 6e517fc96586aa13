"""The daemon's options: what ``tarotd``'s command line (:mod:`tarotd.cli`) asks of it, and
what a hosted event bot's daemon inherits from its host's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from protocol.replication.manifest import SilenceCost
from tarotd.mesh import FaultPlan


@dataclass(frozen=True)
class StaticPeer:
    """A ``--peer``: the daemon's endpoint and, if given, its identity key — the one it must
    prove there, and the one the mesh encrypts to (so it is needed but with ``--no-curve``)."""

    endpoint: str
    key: bytes | None = None


@dataclass
class Options:
    home: Path
    name: str
    listen: str = "tcp://0.0.0.0:0"
    peers: Sequence[StaticPeer] = ()
    discovery: bool = True
    discovery_port: int | None = None
    bot: str | None = None  #: play this daemon's own seat with a bot of this level
    bots: int = 0  #: extra bot seats hosted here
    bot_level: str = "basic"
    table: str | None = None
    seats: int = 5
    invite: str | None = None  #: ``--invite``: the code of the --table, from its opener's screen
    deals: int | None = None
    #: seconds a table may stand still at a deck step, or for a seat whose daemon is away
    timeout: float = 30.0
    #: seconds it may stand still while a player at a daemon that answers decides
    decision_timeout: float = 300.0
    think: float = 0.0  #: seconds a bot takes to decide, so that a person can follow the game
    #: with no client connected, a bot decides for the player after this
    autoplay: float | None = None
    max_tables: int = 4  #: tables played at once; more are refused, with a logged reason
    faults: FaultPlan | None = None  #: transport faults injected, for tests and soaks
    #: the cheat lab: this daemon's own seat runs this attack (a kind the lab plugs in)
    cheat: str | None = None
    #: ZeroMQ CURVE encryption between members, keys derived from the identities (off: --no-curve)
    curve: bool = True
    #: what a seat timed out before the reveal costs (``--silence``)
    silence: SilenceCost = SilenceCost.NOTHING
    #: Tests only (``tarotd --deal-seed``, refused without ``TAROT_TESTING=1``): the seeds of
    #: the seats hosted here, the lobby's table ids and coins and the bots' choices all come
    #: from it, so that a daemon hosting every seat deals the same cards on every run.
    deal_seed: int | None = None
