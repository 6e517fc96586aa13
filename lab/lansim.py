"""A LAN on one machine: Linux network namespaces joined by a bridge (root only).

Discovery and the mesh must meet real interfaces: broadcast, ARP, a cable pulled in the
middle of a deal.  Network namespaces give N hosts with their own stacks on one kernel, no
virtual machine needed:

* namespace ``trt-<id>-br`` holds the switch: bridge ``br0`` and the switch-side end
  ``p<i>`` of one veth pair per host;
* host ``i`` is namespace ``trt-<id>-<i>``: ``lo`` up and ``eth0`` with
  ``198.18.0.<i+1>/24`` (broadcast ``198.18.0.255``).

198.18.0.0/15 is reserved for benchmarking (RFC 2544), so it collides with no real network,
and nothing is created in the root namespace: the simulated LAN cannot leak into the
machine's own.  Interface names then only need to be unique inside their namespace; the
namespace names carry ``<id>`` (pid and random bits) so that parallel runs never collide.
A cable is pulled by setting the switch-side end down (:meth:`Lan.link_down`), which the
host sees as lost carrier, as with a real switch.

Use :class:`Lan` from tests, or ``scripts/lan-sim --hosts N -- CMD...`` to run a command on
every host (``{i}`` and ``{ip}`` substituted), logs in a temporary directory.  Everything
is torn down on exit, on an error, on Ctrl-C or SIGTERM, and at interpreter exit.
"""

from __future__ import annotations

import argparse
import atexit
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType, TracebackType
from typing import IO, Any, Final

SUBNET_PREFIX: Final = "198.18.0."
PREFIX_LENGTH: Final = 24
BROADCAST: Final = "198.18.0.255"
MAX_HOSTS: Final = 253
ARP_SETTINGS: Final = Path("/proc/sys/net/ipv4/neigh/default")  #: the kernel's ARP table limits
#: Seconds a process gets to exit after SIGTERM before it is killed, at teardown.
TERMINATE_GRACE: Final = 2.0


class LanError(RuntimeError):
    """The simulated LAN could not be built (not root, no ``ip``, namespaces refused…)."""


class Lan:
    """``hosts`` network namespaces on one bridge.  A context manager: built on entry,
    torn down on exit (and at interpreter exit, should ``__exit__`` never run).

    ``name`` begins every namespace's name and ``subnet`` (three octets and a dot, inside
    198.18.0.0/15) is the LAN's /24: tests that may run beside each other take their own."""

    def __init__(self, hosts: int, name: str = "trt", subnet: str = SUBNET_PREFIX) -> None:
        if not 1 <= hosts <= MAX_HOSTS:
            raise ValueError(f"a LAN has 1 to {MAX_HOSTS} hosts, not {hosts}")
        if not re.fullmatch(r"198\.1[89]\.\d{1,3}\.", subnet):
            raise ValueError(f"{subnet!r} is not a /24 of 198.18.0.0/15, such as '198.18.7.'")
        self.hosts = hosts
        self.name = name
        self.subnet = subnet
        self.id = f"{os.getpid()}{secrets.token_hex(2)}"
        self._namespaces: list[str] = []  # those created, so teardown removes only them
        self._arp_limits: dict[Path, str] = {}  # the kernel's settings raised here, to restore
        self._processes: list[subprocess.Popen[Any]] = []

    def __enter__(self) -> Lan:
        atexit.register(self.close)
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def switch(self) -> str:
        """The namespace of the bridge."""
        return f"{self.name}-{self.id}-br"

    def namespace(self, i: int) -> str:
        self._check_host(i)
        return f"{self.name}-{self.id}-{i}"

    def ip(self, i: int) -> str:
        self._check_host(i)
        return f"{self.subnet}{i + 1}"

    def run(self, i: int, argv: Sequence[str], **popen_kwargs: Any) -> subprocess.Popen[Any]:
        """Start ``argv`` on host ``i``; it is terminated at teardown if still running."""
        process: subprocess.Popen[Any] = subprocess.Popen(
            ["ip", "netns", "exec", self.namespace(i), *argv], **popen_kwargs
        )
        self._processes.append(process)
        return process

    def add_address(self, i: int, address: str) -> None:
        """Give host ``i`` one more address on the LAN (``address`` in its ``subnet``),
        as a host that sends from many addresses does: an attacker in the tests."""
        if not address.startswith(self.subnet):
            raise ValueError(f"{address} is not on the LAN {self.subnet}0/{PREFIX_LENGTH}")
        _ip(
            "-n",
            self.namespace(i),
            "addr",
            "add",
            f"{address}/{PREFIX_LENGTH}",
            "brd",
            "+",
            "dev",
            "eth0",
        )

    def link_down(self, i: int) -> None:
        """Pull host ``i``'s cable: its switch port goes down, it loses carrier."""
        _ip("-n", self.switch, "link", "set", self._switch_port(i), "down")

    def link_up(self, i: int) -> None:
        """Plug host ``i``'s cable back in."""
        _ip("-n", self.switch, "link", "set", self._switch_port(i), "up")

    def close(self) -> None:
        """Stop the processes started here, then delete the namespaces (which deletes the
        bridge and every veth with them).  Safe to call again, and the atexit hook stays
        until the end, should a second Ctrl-C interrupt this."""
        for process in self._processes:
            _stop(process)
        for namespace in reversed(self._namespaces):
            _kill_left_behind(namespace)
            subprocess.run(["ip", "netns", "delete", namespace], capture_output=True, check=False)
        self._processes.clear()
        self._namespaces.clear()
        for path, value in self._arp_limits.items():
            path.write_text(value)
        self._arp_limits.clear()
        atexit.unregister(self.close)

    def _build(self) -> None:
        if shutil.which("ip") is None:
            raise LanError("the ip command is missing (apt-get install iproute2)")
        self._make_room_in_the_arp_table(self.hosts * (self.hosts - 1))
        self._add_namespace(self.switch)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")
        for i in range(self.hosts):
            self._add_host(i)

    def _make_room_in_the_arp_table(self, entries: int) -> None:
        """The kernel keeps one ARP table for every namespace, of at most ``gc_thresh3``
        entries (1,024 by default); past it sends fail with ENOBUFS and hosts silently drop
        off the LAN — fifty hosts that all talk to each other need 2,450.  Raised for the
        LAN's lifetime, restored at teardown."""
        hard, soft = ARP_SETTINGS / "gc_thresh3", ARP_SETTINGS / "gc_thresh2"
        if not hard.exists() or int(hard.read_text()) >= 2 * entries:
            return
        for path, value in ((soft, entries), (hard, 2 * entries)):  # soft ≤ hard at every step
            self._arp_limits.setdefault(path, path.read_text())
            path.write_text(str(value))

    def _add_host(self, i: int) -> None:
        host = self.namespace(i)
        self._add_namespace(host)
        port = self._switch_port(i)
        _ip(
            "-n",
            self.switch,
            "link",
            "add",
            port,
            "type",
            "veth",
            "peer",
            "name",
            "eth0",
            "netns",
            host,
        )
        _ip("-n", self.switch, "link", "set", port, "master", "br0", "up")
        _ip("-n", host, "link", "set", "lo", "up")
        _ip("-n", host, "addr", "add", f"{self.ip(i)}/{PREFIX_LENGTH}", "brd", "+", "dev", "eth0")
        _ip("-n", host, "link", "set", "eth0", "up")

    def _add_namespace(self, name: str) -> None:
        _ip("netns", "add", name)
        self._namespaces.append(name)

    def _switch_port(self, i: int) -> str:
        """The switch-side end of host ``i``'s veth pair, in the switch namespace."""
        self._check_host(i)
        return f"p{i}"

    def _check_host(self, i: int) -> None:
        if not 0 <= i < self.hosts:
            raise IndexError(f"host {i} is not on this LAN of {self.hosts}")


def _ip(*args: str) -> None:
    """Run ``ip ARGS``; a failure becomes a :class:`LanError` with ip's own message."""
    result = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise LanError(
            f"ip {' '.join(args)}: {result.stderr.strip() or f'exit {result.returncode}'}"
        )


def _stop(process: subprocess.Popen[Any]) -> None:
    """Terminate one process started here, by its id, and kill it if it lingers."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(TERMINATE_GRACE)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _kill_left_behind(namespace: str) -> None:
    """Kill what the commands run in one of our namespaces left running there (a daemon
    a shell started in the background, say): it would keep the namespace alive."""
    result = subprocess.run(
        ["ip", "netns", "pids", namespace], capture_output=True, text=True, check=False
    )
    for pid in result.stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


# --- scripts/lan-sim -------------------------------------------------------------------


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="lan-sim",
        description="Build a LAN of network namespaces, run CMD on every host, tear it all down. "
        "In CMD, {i} becomes the host number and {ip} its address.",
        epilog="example: scripts/lan-sim --hosts 3 -- python -m tarotd.discovery --name host{i} "
        "--json",
    )
    parser.add_argument("--hosts", type=int, default=3)
    parser.add_argument(
        "--timeout", type=float, default=None, help="stop the commands after this many seconds"
    )
    parser.add_argument(
        "--log-dir", type=Path, default=None, help="default: a new temporary directory"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the LAN up after the commands, until Ctrl-C"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD ARGS...")
    args = parser.parse_args(argv)
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if not 1 <= args.hosts <= MAX_HOSTS:
        parser.error(f"--hosts is 1 to {MAX_HOSTS}")
    if not args.command and not args.keep:
        parser.error("give a command after -- (or --keep for a LAN to use by hand)")
    return args


def _substitute(argv: Sequence[str], lan: Lan, i: int) -> list[str]:
    # str.replace, not str.format: a command may well contain other braces (JSON, shell).
    return [arg.replace("{i}", str(i)).replace("{ip}", lan.ip(i)) for arg in argv]


def _run_all(lan: Lan, command: Sequence[str], log_dir: Path, timeout: float | None) -> list[int]:
    """Run the command on every host at once, wait for all, and return their exit codes."""
    logs: list[IO[bytes]] = []
    processes: list[subprocess.Popen[Any]] = []
    try:
        for i in range(lan.hosts):
            output = open(log_dir / f"host-{i}.log", "wb")
            logs.append(output)
            argv = _substitute(command, lan, i)
            processes.append(lan.run(i, argv, stdout=output, stderr=subprocess.STDOUT))
        deadline = None if timeout is None else time.monotonic() + timeout
        return [_wait(process, deadline) for process in processes]
    finally:
        for log in logs:
            log.close()


def _wait(process: subprocess.Popen[Any], deadline: float | None) -> int:
    try:
        return process.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        _stop(process)
        return process.wait()


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """Signals unwind like Ctrl-C, through every ``finally``, so that the LAN is torn down."""
    raise KeyboardInterrupt(signal.Signals(signum).name)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    if os.geteuid() != 0:
        print("lan-sim: network namespaces need root", file=sys.stderr)
        return 2
    # Ctrl-C and SIGTERM always tear down, even when started in the background (where the
    # shell ignores SIGINT); a hangup too, unless ignored on purpose (nohup).
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if signum != signal.SIGHUP or signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _interrupt)
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="lan-sim-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    try:
        with Lan(args.hosts) as lan:
            print(
                f"lan-sim: LAN {lan.id}: {args.hosts} hosts, switch {lan.switch}, logs in "
                f"{log_dir}",
                flush=True,
            )
            codes = _run_all(lan, args.command, log_dir, args.timeout) if args.command else []
            for i, code in enumerate(codes):
                print(
                    f"lan-sim: host {i} {lan.ip(i)} ({lan.namespace(i)}) exit {code}: "
                    f"{log_dir}/host-{i}.log"
                )
            if args.keep:
                _wait_by_hand(lan)
    except KeyboardInterrupt:
        print("lan-sim: interrupted, LAN torn down", file=sys.stderr)
        return 130
    except LanError as exc:
        print(f"lan-sim: {exc}", file=sys.stderr)
        return 2
    return 0 if all(code == 0 for code in codes) else 1


def _wait_by_hand(lan: Lan) -> None:
    for i in range(lan.hosts):
        print(f"lan-sim: host {i} {lan.ip(i)}: ip netns exec {lan.namespace(i)} bash")
    print("lan-sim: Ctrl-C to tear the LAN down", flush=True)
    signal.pause()


if __name__ == "__main__":
    sys.exit(main())
