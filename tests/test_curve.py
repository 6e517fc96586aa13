"""ZeroMQ CURVE between members (the daemon's default; ``tarotd --no-curve`` for debugging):
the traffic is encrypted, each daemon's CURVE key is derived from its identity key and bound
to it, and everything above the mesh — deals, faults, heartbeats — works as without it.

The mesh-level tests run meshes in this process; the daemon-level ones run real ``tarotd``
processes on 127.0.0.1 with static peers given by key (``--peer KEY@HOST:PORT``), their homes'
identities made beforehand so that the keys are known when the command lines are written.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import zmq
from daemons import (
    daemon_argv,
    free_ports,
    home_key,
    kill_all,
    log_path,
    logs,
    scores,
    spawn,
    stop,
    wait_all,
)
from test_mesh import Node, challenge, connected_pair, hello, raw_socket, run, running, wait_for

from client.api import ask
from protocol.replication.identity import Identity
from tarotd.cli import main
from tarotd.mesh import FaultPlan, PeerState, curve_public_key, curve_secret_key, decode

pytestmark = pytest.mark.daemons

# --------------------------------------------------------------------------- the mesh


def test_a_dealer_must_hold_the_curve_key_of_the_identity_it_says_hello_as(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Knowing the server's key lets anyone through the handshake; a HELLO is then answered
    only on a connection made under the CURVE key derived from the identity that signed it."""

    async def say_hello(
        server: Node, speaker: Identity, public: bytes, secret: bytes
    ) -> dict[str, Any] | None:
        async with raw_socket(zmq.DEALER) as raw:
            raw.setsockopt(zmq.CURVE_SERVERKEY, curve_public_key(server.key))
            raw.setsockopt(zmq.CURVE_PUBLICKEY, public)
            raw.setsockopt(zmq.CURVE_SECRETKEY, secret)
            raw.connect(server.mesh.endpoint)
            await raw.send(hello(speaker, *await challenge(raw)))
            try:
                frames = await asyncio.wait_for(raw.recv_multipart(), timeout=2)
            except TimeoutError:
                return None
            return decode(frames[0], frozenset({"hello-ack"}))

    async def test() -> None:
        server, member = Node("server", curve=True), Identity.generate()
        async with running(server):
            stats = server.mesh.stats
            stranger_public, stranger_secret = zmq.curve_keypair()
            with caplog.at_level(logging.WARNING, logger="tarotd.mesh"):
                assert await say_hello(server, member, stranger_public, stranger_secret) is None
            assert stats.bad_hello == 1 and server.mesh.peers() == []
            assert (
                "its connection's CURVE key is not the one derived from that identity"
                in caplog.text
            )
            # The same HELLO under the member's own CURVE key pair is answered.
            own = (curve_public_key(member.public_key), curve_secret_key(member))
            reply = await say_hello(server, member, *own)
            assert reply is not None and reply["to"] == member.public_key and stats.bad_hello == 1

    run(test)


def test_curve_meshes_deliver_exactly_once_in_order_under_faults_with_heartbeats() -> None:
    async def test() -> None:
        def faults(seed: int) -> FaultPlan:
            return FaultPlan(drop=0.1, duplicate=0.05, reorder=0.05, delay_ms=30, seed=seed)

        a, b = Node("a", curve=True, faults=faults(1)), Node("b", curve=True, faults=faults(2))
        async with running(a, b):
            await connected_pair(a, b)
            for i in range(500):
                a.mesh.send(b.key, "x", b"%d" % i)
                b.mesh.send(a.key, "y", b"%d" % i)
            await wait_for(lambda: len(b.received) >= 500 and len(a.received) >= 500, "all", 15)
            assert b.bodies_from(a) == a.bodies_from(b) == [b"%d" % i for i in range(500)]
            # the faults happened
            assert a.mesh.stats.retransmits > 0 and b.mesh.stats.duplicates > 0
            await asyncio.sleep(0.5)  # idle: only heartbeats keep the peers up
            assert a.state_of(b) is b.state_of(a) is PeerState.UP
            assert a.mesh.stats.errors == b.mesh.stats.errors == 0

    run(test)


@pytest.mark.parametrize(
    ("dialler_curve", "listener_curve", "wrong_key", "said"),
    [
        # (or, when the far end hung up before saying why, what it may be)
        (
            False,
            True,
            False,
            (
                "the daemon there encrypts (CURVE, the default) and this one runs with --no-curve",
                "does it encrypt (CURVE, the default: then every member must",
            ),
        ),
        (
            True,
            False,
            False,
            (
                "the daemon there runs with --no-curve, unencrypted, and this one encrypts",
                "and does it encrypt too (no --no-curve)?",
            ),
        ),
        (True, True, True, ("the daemon there fails the CURVE handshake: is it",)),
    ],
)
def test_a_link_that_cannot_connect_says_why(
    caplog: pytest.LogCaptureFixture,
    dialler_curve: bool,
    listener_curve: bool,
    wrong_key: bool,
    said: tuple[str, ...],
) -> None:
    async def test() -> None:
        dialler, listener = (
            Node("dialler", curve=dialler_curve),
            Node("listener", curve=listener_curve),
        )
        async with running(dialler, listener):
            with caplog.at_level(logging.WARNING, logger="tarotd.mesh"):
                expected = Identity.generate().public_key if wrong_key else listener.key
                dialler.mesh.connect(listener.mesh.endpoint, expected)
                await wait_for(
                    lambda: any(text in caplog.text for text in said), "the reason in the log", 10
                )
                await asyncio.sleep(0.5)  # it keeps failing: still said once
            assert caplog.text.count("cannot connect") == 1
            assert dialler.state_of(listener) is not PeerState.UP

    run(test)


def test_a_curve_mesh_needs_the_key_of_whatever_it_connects_to() -> None:
    async def test() -> None:
        node = Node("alone", curve=True)
        async with running(node):
            with pytest.raises(ValueError, match="needs it"):
                node.mesh.connect("tcp://127.0.0.1:9")

    run(test)


# --------------------------------------------------------------------------- the daemon


@pytest.mark.parametrize("curve", [[], ["--curve"]], ids=["default", "--curve"])
def test_a_peer_given_without_its_key_is_a_usage_error_unless_unencrypted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, curve: list[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--home", str(tmp_path), *curve, "--peer", "127.0.0.1:47475"])
    assert exit_info.value.code == 2
    said = capsys.readouterr().err
    assert (
        "--peer KEY@HOST:PORT" in said
        and "tarotd --print-key" in said
        and "or --no-curve, unencrypted" in said
    )
    assert not (tmp_path / "identity.key").exists()  # refused before anything started


def test_curve_and_no_curve_together_are_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--home", str(tmp_path), "--curve", "--no-curve"])
    assert exit_info.value.code == 2
    assert "argument --no-curve: not allowed with argument --curve" in capsys.readouterr().err


def test_print_key_prints_the_homes_key_made_if_new_and_the_same_after(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["--home", str(tmp_path / "d0"), "--print-key"]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed == home_key(tmp_path / "d0") and len(printed) == 64
    assert main(["--home", str(tmp_path / "d0"), "--print-key"]) == 0
    assert capsys.readouterr().out.strip() == printed


def test_three_daemons_encrypt_by_default_and_play_a_deal_with_identical_audited_score_sheets(
    tmp_path: Path,
) -> None:
    ports, homes = free_ports(3), [tmp_path / f"d{i}" for i in range(3)]
    processes = []
    for i in range(3):
        peers = [(homes[j], ports[j]) for j in range(3) if j != i]
        extra = ["--curve"] if i == 0 else []  # the option of before: still taken, and the default
        argv = daemon_argv(
            homes[i], f"joueur{i}", ports[i], peers, deals=1, timeout=40, extra=extra
        )
        processes.append(spawn(argv, log_path(tmp_path, i)))
    wait_all(processes, tmp_path, timeout=55)
    sheets = [scores(tmp_path / f"d{i}") for i in range(3)]
    assert all(sheet == sheets[0] for sheet in sheets)
    deals = sheets[0]["deals"]
    assert isinstance(deals, list) and len(deals) == 1
    assert deals[0]["audit"] == "ok" and sum(deals[0]["scores"]) == 0
    assert all("CURVE encryption on" in log_path(tmp_path, i).read_text() for i in range(3))


async def relay(port: int, target: int, record: bytearray) -> asyncio.Server:
    """A TCP relay on ``port`` to ``target`` on 127.0.0.1 that records what passes, both ways."""

    async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                record.extend(data)
                writer.write(data)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", target)
        await asyncio.gather(pump(reader, upstream_writer), pump(upstream_reader, writer))

    return await asyncio.start_server(connection, "127.0.0.1", port)


async def status_when_up(
    home: Path, process: subprocess.Popen[bytes], timeout: float
) -> dict[str, Any]:
    """The daemon's status once it sees a peer up (its link through the relay proved the key)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the daemon exited with status {process.returncode}"
        try:
            status: dict[str, Any] = await ask(home, "status")
            if any(peer["state"] == "up" for peer in status["peers"]):
                return status
        except Exception:  # not started yet: its socket is not there
            pass
        await asyncio.sleep(0.1)
    raise AssertionError(f"no peer came up in {timeout} s")


@pytest.mark.parametrize("curve", [False, True], ids=["plain", "curve"])
def test_curve_hides_what_a_relay_between_two_daemons_sees(tmp_path: Path, curve: bool) -> None:
    """Alice reaches Bob through a recording relay.  With ``--no-curve`` her name and the frame
    kinds are there to read; encrypted, as by default, neither is, although as many bytes
    went through."""
    alice_port, bob_port, relay_port = free_ports(3)
    keys = [home_key(tmp_path / f"d{i}") for i in range(2)]
    option = [] if curve else ["--no-curve"]
    alice = daemon_argv(
        tmp_path / "d0",
        "alice-in-the-clear",
        alice_port,
        [],
        bot=None,
        table=None,
        extra=[*option, "--peer", f"{keys[1]}@127.0.0.1:{relay_port}"],
    )
    bob = daemon_argv(tmp_path / "d1", "bob", bob_port, [], bot=None, table=None, extra=option)
    record = bytearray()

    async def scenario() -> dict[str, Any]:
        server = await relay(relay_port, bob_port, record)
        processes = [spawn(alice, log_path(tmp_path, 0)), spawn(bob, log_path(tmp_path, 1))]
        try:
            status = await status_when_up(tmp_path / "d0", processes[0], timeout=40)
            shown = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-m", "client.cli", "--home", str(tmp_path / "d0"), "status"],
                capture_output=True,
                text=True,
                check=True,
            )
            first, key_line = shown.stdout.splitlines()[:2]
            assert first.endswith(
                ", CURVE" if curve else ", UNENCRYPTED (--no-curve)"
            ) and key_line.split()[:2] == ["key", keys[0]]
            await asyncio.sleep(1.5)  # a heartbeat or so on the relayed link
            stopped = await asyncio.gather(
                *(asyncio.to_thread(stop, process) for process in processes)
            )
            assert stopped == [0, 0], logs(tmp_path, 2)  # (the relay keeps relaying meanwhile)
            return status
        finally:
            kill_all(processes)
            server.close()

    status = asyncio.run(scenario())
    assert status["curve"] is curve and status["key"] == keys[0]
    assert len(record) > 300, "the traffic went through the relay"
    for plain_text in (b"alice-in-the-clear", b"hello"):
        assert (plain_text in record) is not curve, plain_text
    warned = "--no-curve: nothing between the members is encrypted — anyone on the LAN reads"
    assert (warned in log_path(tmp_path, 0).read_text()) is not curve
