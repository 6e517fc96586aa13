"""``tarot join CODE --name NAME`` with real processes (issue 37, item 4): one command per player.

The opener's daemon (alice, a bot seat of her own beside her) opens the table ``club`` of three
and lists bob's daemon as a ``--peer``, so that it reaches bob on loopback without broadcast;
bob's daemon does not know alice — a stranger — and may join only by the table's invite code,
read from alice's log as a player reads it on her screen.  ``tarot join CODE --name bob`` starts
bob's daemon in the background (its log in bob's home), joins the table of the code and leaves
(``--no-client``: the screen is the client's tests'); typed again it finds the daemon running.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.tmux import Pane
from tests.daemons import answer, daemon_argv, free_ports, home_key, kill_all, spawn
from tests.lan import NEEDS_ROOT, fleet, lan_of

pytestmark = pytest.mark.daemons

ROOT = Path(__file__).resolve().parent.parent


def tarot(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "client.cli", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        check=False,
    )


def _stop_daemon_of(home: Path) -> None:
    """The daemon ``tarot join`` started is no child of ours: stopped by the pid its lock
    holds (SIGTERM, then SIGKILL)."""
    pid_file = home / "daemon.pid"
    text = pid_file.read_text().strip() if pid_file.exists() else ""
    if not text.isdigit():
        return
    pid = int(text)
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 2.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


@pytest.fixture
def bob_home(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "bob"
    yield home
    _stop_daemon_of(home)


def _invite_code(log: Path, deadline: float) -> str:
    while time.monotonic() < deadline:
        found = re.search(r"invite code (\w{4}-\w{4})", log.read_text(errors="replace"))
        if found:
            return found.group(1)
        time.sleep(0.1)
    pytest.fail(f"alice's daemon never said its invite code:\n{log.read_text()[-2000:]}")


def start_alice(tmp_path: Path, bob_home: Path) -> tuple[subprocess.Popen[bytes], Path, int]:
    """Alice's daemon, opener of the table with a bot of her own, knowing bob's key (made
    now, as `tarotd --print-key` would) at the port his daemon will listen on: her process,
    her log and that port."""
    alice_port, bob_port = free_ports(2)
    bob_key = home_key(bob_home)
    alice_log = tmp_path / "alice.log"
    alice = spawn(
        daemon_argv(
            tmp_path / "alice",
            "alice",
            alice_port,
            [],
            bot=None,
            seats=3,
            deals=None,
            timeout=30,
            extra=("--bots", "1", "--peer", f"{bob_key}@127.0.0.1:{bob_port}"),
        ),
        alice_log,
    )
    return alice, alice_log, bob_port


def test_tarot_join_starts_the_daemon_joins_by_code_and_finds_it_again(
    tmp_path: Path, bob_home: Path
) -> None:
    alice, alice_log, bob_port = start_alice(tmp_path, bob_home)
    try:
        code = _invite_code(alice_log, time.monotonic() + 60)
        daemon = f"--no-discovery --listen 127.0.0.1:{bob_port}"
        joined = tarot(
            "--home", str(bob_home), "join", code.lower(), "--name", "bob", "--no-client",
            "--tarotd", daemon, "--wait", "60",
        )  # fmt: skip
        assert joined.returncode == 0, joined.stderr + _tail(bob_home, alice_log)
        assert "starts in the background" in joined.stderr
        assert "joined the table 'club'" in joined.stderr
        log = bob_home / "tarotd.log"
        assert log.exists() and "listening on" in log.read_text()
        pid = int((bob_home / "daemon.pid").read_text())
        # Detached: in a session of its own, not ours (a closed terminal does not stop it).
        assert os.getsid(pid) == pid != os.getsid(0)

        # The table forms with bob's seat in it, on both daemons.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            status = answer(bob_home, "status")
            tables = status.get("tables") if isinstance(status, dict) else None
            if tables:
                break
            time.sleep(0.2)
        else:
            pytest.fail("bob's table never formed:" + _tail(bob_home, alice_log))
        assert sorted(tables[0]["seats"]) == ["alice", "alice-bot1", "bob"]
        assert re.search(r"table club \(\w+\) formed: ", log.read_text())
        assert re.search(r"peer alice \[[\w-]+\] found at ", log.read_text())

        # Typed again: the same daemon, found running, no second one started.
        again = tarot("--home", str(bob_home), "join", code, "--no-client", "--wait", "10")
        assert again.returncode == 0, again.stderr
        assert "starts in the background" not in again.stderr
        assert "at a table already" in again.stderr
        assert int((bob_home / "daemon.pid").read_text()) == pid
    finally:
        kill_all([alice])


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_in_a_terminal_it_opens_the_client_at_the_table_and_the_daemon_outlives_it(
    tmp_path: Path, bob_home: Path
) -> None:
    """The one command in a real terminal: the client opens on bob's seat; the terminal
    closed (its tmux server killed), the daemon plays on; typed again, the client is back."""
    alice, alice_log, bob_port = start_alice(tmp_path, bob_home)
    env = {**os.environ, "LANG": "C.UTF-8"}
    command = (
        f"cd {ROOT} && {sys.executable} -m client.cli --home {bob_home} --lang en join "
        f"{{code}} --name bob --tarotd='--no-discovery --listen 127.0.0.1:{bob_port}'"
    )
    panes: list[Pane] = []
    try:
        code = _invite_code(alice_log, time.monotonic() + 60)
        panes.append(Pane(command.format(code=code), env))
        screen = panes[-1].wait(lambda s: "bob (you)" in s, "bob's seat at the table", 90)
        assert "alice" in screen
        pid = int((bob_home / "daemon.pid").read_text())
        panes[-1].kill()  # the terminal goes away
        time.sleep(1)
        os.kill(pid, 0)  # the daemon did not go with it
        panes.append(Pane(command.format(code=code), env))
        panes[-1].wait(lambda s: "bob (you)" in s, "the client again, on the same seat", 60)
        assert int((bob_home / "daemon.pid").read_text()) == pid
    finally:
        for pane in panes:
            pane.kill()
        kill_all([alice])


@NEEDS_ROOT
def test_on_a_lan_it_finds_the_table_of_the_code_by_discovery_alone(
    tmp_path: Path, bob_home: Path
) -> None:
    """As at a club: two laptops (network namespaces on one bridge), no option but the code
    and the name — bob's daemon hears alice's table by its beacons and joins it by the code."""
    with lan_of(2) as lan, fleet(lan, tmp_path, budget=180) as group:
        alice = group.start(0, "alice", "--table", "club", "--seats", "3", "--bots", "1")
        code = _invite_code(alice.log_path, time.monotonic() + 60)
        joining = lan.run(
            1,
            [sys.executable, "-m", "client.cli", "--home", str(bob_home), "join", code,
             "--name", "bob", "--no-client", "--wait", "60"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        _out, err = joining.communicate(timeout=150)
        assert joining.returncode == 0, err + group.logs()
        assert "joined the table 'club'" in err
        while group.remaining() > 0:
            status = answer(bob_home, "status")
            tables = status.get("tables") if isinstance(status, dict) else None
            if tables:
                assert sorted(tables[0]["seats"]) == ["alice", "alice-bot1", "bob"]
                break
            time.sleep(0.2)
        else:
            group.fail("bob's table never formed")
        log = (bob_home / "tarotd.log").read_text()
        assert re.search(r"peer alice \[[\w-]+\] found at 198\.18\.0\.1:", log), log


@pytest.mark.slow
@NEEDS_ROOT
def test_the_readmes_club_night_with_its_commands_alone(tmp_path: Path) -> None:
    """The README's recipe on a LAN of five namespaces, by its commands only: ``tarot join``
    on every laptop (the players' seats played by bots, ``--tarotd="--bot basic"``, so that
    the evening plays itself), ``tarot event open``, each ``tarot event join``, ``tarot event
    start``, the ranking in ``tarot event show`` and the page ``tarot event export --html``;
    every daemon's log follows the evening (75 s here)."""
    names = ["orga", "anne", "bruno", "chloe", "david"]
    homes = [tmp_path / name for name in names]
    with lan_of(5) as lan:

        def run(host: int, *argv: str) -> subprocess.CompletedProcess[str]:
            process = lan.run(
                host, [sys.executable, "-m", "client.cli", "--home", str(homes[host]), *argv],
                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            out, err = process.communicate(timeout=120)
            return subprocess.CompletedProcess(process.args, process.returncode, out, err)

        try:
            for host, name in enumerate(names):
                bot = ["--tarotd=--bot basic"] if host else []
                assert run(host, "join", "--name", name, "--no-client", *bot).returncode == 0
            opened = run(0, "event", "open", "Vendredi", "--rounds", "1", "--deals", "1")
            assert opened.returncode == 0, opened.stderr
            for host in range(1, 5):  # once its daemon has heard the event
                deadline = time.monotonic() + 60
                while run(host, "event", "join").returncode != 0:
                    assert time.monotonic() < deadline, f"{names[host]} never saw the event"
                    time.sleep(1)
            assert run(0, "event", "start").returncode == 0
            deadline = time.monotonic() + 300
            while (
                "The event is over" not in (shown := run(0, "--lang", "en", "event", "show")).stdout
            ):
                assert time.monotonic() < deadline, shown.stdout + shown.stderr
                time.sleep(3)
            assert re.search(r"1\. +(anne|bruno|chloe|david) ", shown.stdout), shown.stdout
            page = tmp_path / "vendredi.html"
            assert run(0, "event", "export", "--html", str(page)).returncode == 0
            assert "Vendredi" in page.read_text()
            for home in homes[1:]:
                log = (home / "tarotd.log").read_text()
                assert re.search(r"table Vendredi R1 T1 \(\w+\) formed: ", log), log
                assert re.search(r"deal 1 scored — ", log), log
        finally:
            for home in homes:
                _stop_daemon_of(home)


def test_a_wrong_code_or_option_starts_nothing(tmp_path: Path) -> None:
    home = tmp_path / "nobody"
    for argv, said in (
        (["join", "7KQ2-M9X", "--name", "bob"], "argument CODE: "),
        (["join", "7KQ2-M9XD", "--name", "b" * 80], "argument --name: "),
        (["join", "--tarotd", "--listen 127.0.0.1:99999", "--name", "bob"], "port 99999"),
        (["join", "--tarotd", "--name carol", "--name", "bob"], "give --name to tarot join"),
        (["join", "--tarotd=--no-such-option"], "unrecognized arguments: --no-such-option"),
    ):
        done = tarot("--home", str(home), *argv)
        assert done.returncode == 2, (argv, done.stderr)
        assert said in done.stderr and done.stderr.count("\n") == 1, (argv, done.stderr)
        assert not home.exists()


def test_a_daemon_that_cannot_start_is_one_line_and_status_2(tmp_path: Path) -> None:
    """An address that is none of this machine's: tarotd can only find it at its bind."""
    home = tmp_path / "bob"
    try:
        done = tarot(
            "--home", str(home), "join", "--name", "bob", "--no-client",
            "--tarotd", "--no-discovery --listen 198.18.0.77:47475",
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert lines[-1].startswith("tarot join: your daemon did not start (exit status 2): ")
        assert "198.18.0.77" in lines[-1] and str(home / "tarotd.log") in lines[-1]
    finally:
        _stop_daemon_of(home)


def _tail(home: Path, alice_log: Path) -> str:
    bob_log = home / "tarotd.log"
    return (
        f"\n--- alice\n{alice_log.read_text(errors='replace')[-3000:]}"
        f"\n--- bob\n{bob_log.read_text(errors='replace')[-3000:] if bob_log.exists() else ''}"
    )
