"""What a daemon refused from the network, and why: counted, and said in the log once per
cause at a limited rate.

A hostile host repeats: a flood of connections, HELLOs or beacons would fill the log with one
line per frame and bury the one line that matters.  So each cause is a :class:`Cause`, counted
for ever (``tarot status`` shows the counts), and logged at most once every
:data:`LOGGED_EVERY` seconds — the first time at once, then with how many more were refused
since.  Sans-IO: the caller passes the time (any monotonic clock, in seconds).
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass
from typing import Final

LOGGED_EVERY: Final = 10.0  #: seconds between two log lines about one cause


class Cause(enum.Enum):
    """Why something from the network was turned away.  The value is what ``tarot status``
    and the log call it; the doc comment, what it means for the player."""

    #: one host holds as many connections to us as it may
    CONNECTIONS_FROM_HOST = "connections-from-host"
    CONNECTIONS_TOTAL = "connections-total"  #: we hold as many incoming connections as we may
    CONNECTION_SILENT = "connections-silent"  #: a connection that sent no ZeroMQ greeting in time
    #: a connection that opened with something else than a ZeroMQ greeting
    NOT_ZEROMQ = "not-zeromq"
    NEW_KEYS = "new-keys"  #: more unknown keys than we take in a second, from everywhere together
    KEYS_FROM_HOST = "keys-from-host"  #: one host already speaks for as many keys as it may
    PEER_TABLE_FULL = "peer-table-full"  #: no room for one more peer that no table needs
    LINKS_FULL = "links-full"  #: no room for one more link on behalf of discovery
    #: a HELLO made for another daemon: a copy replayed to us
    HELLO_MISADDRESSED = "hello-misaddressed"
    #: a HELLO for a challenge its connection does not hold: replayed, or too late
    HELLO_STALE = "hello-stale"
    HELLO_IMPERSONATION = "hello-impersonation"  #: a HELLO on a connection made under another key
    BEACONS_FROM_HOST = "beacons-from-host"  #: one address sends more beacons than it may
    NO_DESCRIPTORS = "no-descriptors"  #: a link not opened: this daemon has no file descriptor left
    #: a beacon of one more key while discovery lists as many peers as it may
    DISCOVERY_FULL = "discovery-full"
    #: a stranger's beacon while strangers hold their share of discovery, spread over hosts
    DISCOVERY_STRANGERS_FULL = "discovery-strangers-full"
    #: a peer dropped from discovery for a newcomer of a better standing or a less crowded host
    DISCOVERY_EVICTED = "discovery-evicted"
    #: no link opened to a stranger: strangers hold their share of the links, spread over hosts
    LINKS_STRANGERS_FULL = "links-strangers-full"
    LINKS_EVICTED = "links-evicted"  #: a link no table needs closed for one of a better standing
    LINKS_UNANSWERED = "links-unanswered"  #: a link closed: nothing answered at its port in time


@dataclass
class _Tally:
    count: int = 0
    unsaid: int = 0  #: refused since the last line
    quiet_until: float = float("-inf")


class Refusals:
    """The counts of :class:`Cause`, and their rate-limited log lines (to ``logger``)."""

    def __init__(self, logger: logging.Logger, every: float = LOGGED_EVERY) -> None:
        self._log = logger
        self._every = every
        self._tallies: dict[Cause, _Tally] = {}

    def refuse(self, cause: Cause, now: float, detail: str) -> None:
        """Count one refusal, and log it with ``detail`` (what and from where; never a
        secret) unless this cause was logged less than ``every`` seconds ago."""
        tally = self._tallies.setdefault(cause, _Tally())
        tally.count += 1
        tally.unsaid += 1
        if now < tally.quiet_until:
            return
        more = (
            f" (and {tally.unsaid - 1} more of the kind since the last line)"
            if tally.unsaid > 1
            else ""
        )
        self._log.warning("refused (%s): %s%s", cause.value, detail, more)
        tally.unsaid, tally.quiet_until = 0, now + self._every

    def count(self, cause: Cause) -> int:
        tally = self._tallies.get(cause)
        return 0 if tally is None else tally.count

    def counts(self) -> dict[str, int]:
        """Every cause refused at least once, by its name: what ``tarot status`` shows."""
        return {cause.value: tally.count for cause, tally in self._tallies.items()}
