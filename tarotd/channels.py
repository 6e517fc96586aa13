"""The daemon's channels on the mesh, and its pace: names and periods every role of the daemon
shares (:mod:`tarotd.daemon` wires them), kept apart so that none imports another for them."""

from __future__ import annotations

from typing import Final

LOBBY: Final = "lobby"  #: forming tables (:mod:`tarotd.lobby`)
DEAL: Final = "deal"  #: a message of play, one frame each
RELAYS: Final = "relays"  #: messages of play relayed in a batch (tarotd/runner.py, "Relays")
SETTLE: Final = "settle"  #: a deal's closing and a finished table's last row (tarotd/settlement.py)

#: Seconds between two heartbeats of the game (offers repeated, silent seats timed out).
HEARTBEAT: Final = 1.0
