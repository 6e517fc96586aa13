"""Event glue: between the :class:`~tarotd.event_desk.EventDesk` (the events this daemon
organises or plays in) and the rest of the daemon — the mesh its frames travel on, the
lobby that forms the tables it seats, and the local API's ``event…`` requests.

The desk decides and this glue moves: a frame the desk answers goes out here, and a seating
it gives becomes a table the lobby forms under the event's id.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from protocol.event.event import EventError
from protocol.refusal import Refusal
from tarotd.event_book import Heard, Held, Role
from tarotd.event_desk import CHANNEL as EVENT
from tarotd.event_desk import EventDesk
from tarotd.event_frames import EventOut
from tarotd.lobby import BROADCAST
from tarotd.mesh import WILDCARD_HOSTS, PeerState
from tarotd.requests import EventNamed, HostEventBots, OpenEvent, SubstitutePlayer, WithdrawPlayer

if TYPE_CHECKING:
    from tarotd.daemon import Daemon

log = logging.getLogger("tarotd")


class EventGlue:
    """The event desk's frames on the mesh, its seatings in the lobby, its requests."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon

    def send(self, outs: list[EventOut]) -> None:
        """Event frames: to one daemon, or to every peer we know."""
        mesh, own = self.daemon.mesh, self.daemon.identity.public_key
        for destination, frame in outs:
            body = frame.to_wire()
            targets = [p.key for p in mesh.peers()] if destination == BROADCAST else [destination]
            for target in targets:
                if target != own:
                    mesh.send(target, EVENT, body)

    def receive(self, peer: bytes, body: bytes) -> None:
        """A frame of the event channel, to the desk (which refuses, and says, a malformed one)."""
        self.send(self.daemon.events.receive(peer, body))
        self.seat_tables()

    def seat_tables(self) -> None:
        """Our player's table in each event round open now: linked to its members' daemons
        and formed through the lobby, under the id the event gives it."""
        daemon = self.daemon
        events, lobby = daemon.events, daemon.lobby
        lobby.fellows = events.fellows()
        # A peer linked already is left to the mesh, which follows it wherever it restarted:
        # the endpoint its registration gave may be the one it left.
        linked = {peer.key for peer in daemon.mesh.peers() if peer.state is PeerState.UP}
        for seating in events.seatings():
            table_id = seating.slot.table_id
            if table_id in daemon.hosting.runners or daemon.store.table(table_id) is not None:
                continue
            if table_id not in lobby.slots:
                log.info(
                    "event %s: round %d, table %d, seat %d — forming it",
                    seating.event_id.hex()[:8],
                    seating.round,
                    seating.table,
                    seating.seat,
                )
            for key, endpoint in events.endpoints(seating.slot.keys):
                host = endpoint[len("tcp://") :].rpartition(":")[0]
                if host not in WILDCARD_HOSTS and key not in linked:
                    daemon.mesh.connect(endpoint, expected_key=key, keep=True)
            daemon.send_lobby(lobby.expect(seating.slot))
        daemon.hosting.start_ready_tables()

    # --- The local API's event… requests (EventError for the client) -------------------------

    def listing(self) -> Any:
        return self.daemon.events.listing()

    def open(self, request: OpenEvent) -> dict[str, Any]:
        events = self.daemon.events
        held = events.open(
            request.name,
            request.rounds,
            request.deals,
            request.tables,
            request.movement,
            self.daemon.options.silence,
        )
        self.send(events.heartbeat(time.monotonic()))
        return {
            "event": held.event_id.hex(),
            "name": request.name,
            "rounds": request.rounds,
            "deals": request.deals,
        }

    def join(self, request: EventNamed) -> dict[str, Any]:
        events = self.daemon.events
        event_id = events.find(request.event)
        self.send(events.join(event_id, self.daemon.options.name))
        return {"joined": event_id.hex()}

    async def host_bots(self, request: HostEventBots) -> dict[str, Any]:
        """``event-join`` with ``bots``: that many bots hosted here register with the event,
        each a player of its own (:mod:`tarotd.event_bots`); the daemon's own player does not."""
        daemon = self.daemon
        event_id = daemon.events.find(request.event)
        level = daemon.options.bot_level if request.level is None else request.level
        held = daemon.events.held.get(event_id)
        if held is not None and held.role is Role.ORGANISER:
            endpoint = daemon.mesh.endpoint
            host = endpoint.removeprefix("tcp://").rpartition(":")[0]
            if host in WILDCARD_HOSTS:  # the bots run here: this machine's loopback reaches us
                endpoint = endpoint.replace(host, "127.0.0.1", 1)
            heard = Heard(held.config, held.record.entries[0].wire, endpoint, 1)
        elif event_id in daemon.events.heard:
            heard = daemon.events.heard[event_id]
        else:
            raise EventError(
                "no event of that id is heard here (tarot event list)", Refusal.EVENT_NOT_HEARD
            )
        assert daemon.event_bots is not None  # made at the start
        names = await daemon.event_bots.add(event_id, heard, request.count, level)
        return {"joined": event_id.hex(), "bots": names}

    def start(self, request: EventNamed) -> dict[str, Any]:
        events = self.daemon.events
        event_id = events.find(request.event)
        self.send(events.start(event_id))
        return {"started": event_id.hex()}

    def close(self, request: EventNamed) -> dict[str, Any]:
        """``event-close``: the rows awaited declared lost."""
        events = self.daemon.events
        event_id = events.find(request.event)
        self.send(events.close_now(event_id))
        return {"closed": event_id.hex()}

    def withdraw(self, request: WithdrawPlayer) -> dict[str, Any]:
        events = self.daemon.events
        return {"withdrawn": events.withdraw(events.find(request.event), request.player)}

    def substitute(self, request: SubstitutePlayer) -> dict[str, Any]:
        events = self.daemon.events
        newcomer, player = events.substitute(
            events.find(request.event), request.newcomer, request.player
        )
        return {"newcomer": newcomer, "player": player}

    def summary(self, request: EventNamed) -> Any:
        """``event``: one event's state, as our player — or our bots — hold it."""
        desk, held = self._held(request)
        return desk.summary(held) | ({} if desk is self.daemon.events else {"seat": None})

    def record(self, request: EventNamed) -> dict[str, Any]:
        """``event-record``: its record, in hexadecimal."""
        _desk, held = self._held(request)
        return {"event": held.event_id.hex(), "record": held.record.to_bytes().hex()}

    def _held(self, request: EventNamed) -> tuple[EventDesk, Held]:
        """The event as held here, and by which desk: ours, or that of a bot we host."""
        daemon = self.daemon
        bots = {} if daemon.event_bots is None else daemon.event_bots.events()
        event_id = daemon.events.find(request.event, bots)
        held, desk = daemon.events.held.get(event_id), daemon.events
        if held is None and daemon.event_bots is not None:  # our bots play it, we do not
            desk, held = daemon.event_bots.holding(event_id) or (desk, None)
        if held is None:
            raise EventError(
                "this daemon is not in that event: tarot event join", Refusal.EVENT_NOT_IN
            )
        return desk, held
