"""Every option of ``tarotd``, of ``scripts/play`` and of ``tarot`` checked at start: a bad value
is one line on stderr saying what was wrong and what is taken, and exit status 2 — never a
traceback, never a daemon running on a wrapped or meaningless value (issue 26, item 9).

The values the issue found taken are tried on the real ``tarotd`` command; the others on
:func:`tarotd.cli.parse`, which is what that command runs first, and which the real command
would run the same way (it creates nothing before).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tarotd.cli import parse
from tarotd.mesh import FaultPlan
from tests.daemons import ROOT

#: The installed command when there is one (``pip install -e .`` puts it beside the interpreter).
INSTALLED = Path(sys.executable).with_name("tarotd")
TAROTD = [str(INSTALLED)] if INSTALLED.exists() else [sys.executable, "-m", "tarotd.cli"]


def tarotd(tmp_path: Path, *argv: str, discovery: bool = False) -> subprocess.CompletedProcess[str]:
    """``tarotd`` with a home of its own (and no broadcast unless asked); one that runs on is
    killed, and fails the test."""
    command = [
        *TAROTD,
        "--home",
        str(tmp_path / "home"),
        *([] if discovery else ["--no-discovery"]),
        *argv,
    ]
    try:
        return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"tarotd {' '.join(argv)} was taken: the daemon ran on")


def refused(result: subprocess.CompletedProcess[str], prog: str) -> str:
    """The one line a refused command printed (status 2, nothing else on stdout or stderr)."""
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2, f"exit status {result.returncode}: {result.stderr}"
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), result.stderr
    assert result.stdout == ""
    return lines[0]


# --- tarotd: the values the issue found taken, on the real command ---------------------------


@pytest.mark.daemons
@pytest.mark.parametrize(
    "argv, said",
    [
        (
            ["--listen", "127.0.0.1:99999"],
            "argument --listen: port 99999 is out of range: give 1 to 65535, or 0 for any free "
            "port",
        ),
        (["--listen", "banana"], "argument --listen: 'banana' is not HOST:PORT"),
        (["--faults", "seed=inf"], "argument --faults: seed=inf: a seed is a whole number"),
        (["--bots", "-1"], "argument --bots: -1 is out of range: give a whole number from 0 to 4"),
        (["--bots", "99"], "argument --bots: 99 is out of range: give a whole number from 0 to 4"),
        (
            ["--max-tables", "0"],
            "argument --max-tables: 0 is out of range: give a whole number, 1 or more",
        ),
        (["--name", ""], "argument --name: the name is empty: give 1 to 59 characters"),
        (
            ["--faults", "delay=-5"],
            "argument --faults: delay=-5: a delay is a number of milliseconds, 0 or more",
        ),
        (
            ["--timeout", "0"],
            "argument --timeout: 0 is out of range: give a number of seconds more than 0",
        ),
        (
            ["--timeout", "-1"],
            "argument --timeout: -1 is out of range: give a number of seconds more than 0",
        ),
    ],
)
def test_tarotd_refuses_at_start_what_it_used_to_take(
    tmp_path: Path, argv: list[str], said: str
) -> None:
    line = refused(tarotd(tmp_path, *argv), "tarotd")
    assert said in line
    assert not (tmp_path / "home").exists()  # refused before anything was made


@pytest.mark.daemons
def test_tarotd_refuses_an_address_that_is_not_this_machines(tmp_path: Path) -> None:
    """Only binding can tell (198.51.100.7 is TEST-NET-2, on no machine): said in one line with
    status 2 after the log's first lines, where the mesh raised a ``ZMQError`` before."""
    result = tarotd(tmp_path, "--listen", "198.51.100.7:47400")
    assert "Traceback" not in result.stderr and result.returncode == 2, result.stderr
    assert result.stderr.splitlines()[-1] == (
        "tarotd: error: --listen 198.51.100.7:47400: cannot listen there (Cannot assign requested "
        "address): give an "
        "address of this machine (0.0.0.0: all of them) and a port free for you on it (0: any "
        "free port)"
    )


@pytest.mark.daemons
def test_tarotd_refuses_a_port_taken_by_another_program(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = tarotd(tmp_path, "--listen", f"127.0.0.1:{port}")
    assert "Traceback" not in result.stderr and result.returncode == 2, result.stderr
    assert (
        f"--listen 127.0.0.1:{port}: cannot listen there (Address already in use)"
        in result.stderr.splitlines()[-1]
    )


@pytest.mark.daemons
def test_tarotd_says_so_when_the_discovery_port_is_held(tmp_path: Path) -> None:
    """By a socket that does not share it (another user's daemon): a traceback before."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as held:
        held.bind(("0.0.0.0", 0))
        port = held.getsockname()[1]
        result = tarotd(
            tmp_path, "--listen", "127.0.0.1:0", "--discovery-port", str(port), discovery=True
        )
    assert "Traceback" not in result.stderr and result.returncode == 2, result.stderr
    assert result.stderr.splitlines()[-1].startswith(
        f"tarotd: error: discovery: cannot bind UDP port {port} (Address already in use): another "
        "program holds it"
    )


# --- tarotd: every other option, on the function the command runs first ----------------------


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--listen", "127.0.0.1:65536"], "port 65536 is out of range"),
        (["--listen", "127.0.0.1:"], "'127.0.0.1:' is not HOST:PORT"),
        (["--listen", ":47400"], "':47400' is not HOST:PORT"),
        (["--listen", "127.0.0.1:٤٧"], "is not HOST:PORT"),  # digits to str.isdigit, not to ZeroMQ
        (["--listen", "a b:47400"], "'a b:47400' is not HOST:PORT"),
        (["--listen", f"{'h' * 260}:1"], "is too long for an endpoint"),
        (
            ["--peer", "10.0.0.2:0"],
            "argument --peer: port 0 is out of range: give 1 to 65535, the port the peer listens "
            "on",
        ),
        (["--peer", "10.0.0.2:99999"], "argument --peer: port 99999 is out of range"),
        (["--peer", "0.0.0.0:47400"], "0.0.0.0 is every address of a machine, none to connect to"),
        (["--peer", "*:47400"], "* is every address of a machine"),
        (["--peer", "laptop"], "'laptop' is not HOST:PORT"),
        (["--peer", "abcd@10.0.0.2:47400"], "'abcd' is not a daemon's key: 64 hex digits"),
        (["--name", "   "], "argument --name: the name is empty"),
        (
            ["--name", "x" * 60],
            "the name has 60 characters: give at most 59, to leave room for the names of its bots",
        ),
        (["--name", "\x1b[31mred"], "the name holds the control or separator character U+001B"),
        (["--home", ""], "argument --home: empty: give a directory"),
        (
            ["--home", "/tmp/" + "x" * 100],
            "too long a path for a home: its API socket's would be 118 bytes",
        ),
        (["--table", ""], "argument --table: the table's name is empty: give 1 to 64 characters"),
        (["--table", "x" * 65], "the table's name has 65 characters: give at most 64"),
        (["--table", "a\nb"], "the table's name holds the control or separator character U+000A"),
        (["--bots", "two"], "argument --bots: 'two' is not a whole number"),
        (["--bots", "5"], "5 is out of range: give a whole number from 0 to 4"),
        (["--seats", "6"], "argument --seats: invalid choice: 6 (choose from 3, 4, 5)"),
        (["--deals", "0"], "argument --deals: 0 is out of range: give a whole number, 1 or more"),
        (["--deals", "2.5"], "argument --deals: '2.5' is not a whole number"),
        (["--timeout", "inf"], "argument --timeout: 'inf' is not a number of seconds"),
        (["--timeout", "nan"], "argument --timeout: 'nan' is not a number of seconds"),
        (["--decision-timeout", "0"], "argument --decision-timeout: 0 is out of range"),
        (
            ["--think", "-0.5"],
            "argument --think: -0.5 is out of range: give a number of seconds 0 or more",
        ),
        (["--autoplay", "0"], "argument --autoplay: 0 is out of range"),
        (["--max-tables", "-1"], "argument --max-tables: -1 is out of range"),
        (
            ["--discovery-port", "0"],
            "argument --discovery-port: 0 is out of range: give a whole number from 1 to 65535",
        ),
        (
            ["--faults", "drop=1"],
            "drop=1: a probability is a number from 0 up to (not including) 1",
        ),
        (["--faults", "duplicate=-0.1"], "duplicate=-0.1: a probability"),
        (["--faults", "reorder=nan"], "reorder=nan: a probability"),
        (["--faults", "delay=inf"], "delay=inf: a delay is a number of milliseconds"),
        (["--faults", "seed=1.5"], "seed=1.5: a seed is a whole number"),
        (["--faults", "drop"], "drop: a probability"),
        (
            ["--faults", "loss=0.1"],
            "unknown fault 'loss': use drop, duplicate, reorder, delay, seed",
        ),
        (["--faults", "drop=0.1,drop=0.2"], "drop is given twice"),
        (["--bot", "genius"], "argument --bot: invalid choice: 'genius'"),
        (["--deal-seed", "7"], "--deal-seed makes every deal predictable: it is for tests only"),
        (
            ["--seats", "3"],
            "--seats is the number of seats at the --table NAME: give both, or neither",
        ),
        (
            ["--table", "club", "--invite", "7KQ2"],
            "argument --invite: '7KQ2' is not an invite code: 8 letters and digits",
        ),
        (["--table", "club", "--invite", "UUUU-UUUU"], "'UUUU-UUUU' is not an invite code"),
        (["--invite", "7KQ2-M9XD"], "--invite is the code of the --table NAME: give both"),
        (
            ["--table", "club", "--seats", "3", "--bots", "3"],
            "--bots 3 and this daemon's own seat make 4 seats at a table of 3: give --bots 0 to 2",
        ),
        (
            ["--think", "300"],
            "--think 300 is not shorter than --decision-timeout 300: a bot would be timed out "
            "before it decides",
        ),
        (
            ["--autoplay", "10", "--decision-timeout", "5"],
            "--autoplay 10 is not shorter than --decision-timeout 5",
        ),
    ],
)
def test_tarotd_refuses_every_bad_value_in_one_line(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    argv: list[str],
    said: str,
) -> None:
    monkeypatch.delenv("TAROT_TESTING", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        parse(["--home", str(tmp_path / "home"), *argv])
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tarotd: error: ") and said in lines[0], lines


def test_a_home_whose_name_cannot_be_a_players_asks_for_a_name(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The name defaults to the home's directory name, which may be no name at all."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        parse(["--home", "n" * 60])
    assert (
        "--name is not given, and the name of the home's directory, 'nnn" in capsys.readouterr().err
    )
    assert parse(["--home", "anne"]).name == "anne"


def test_good_values_are_taken_as_given(tmp_path: Path) -> None:
    args = parse(
        [
            "--home",
            str(tmp_path),
            "--name",
            "anne",
            "--listen",
            "127.0.0.1:047400",
            "--no-curve",
            "--peer",
            "tcp://10.0.0.2:47401",
            "--faults",
            "drop=0.05,duplicate=0,delay=200,seed=-7",
            "--table",
            "club",
            "--seats",
            "5",
            "--bots",
            "4",
            "--think",
            "0",
            "--timeout",
            "0.5",
            "--autoplay",
            "1",
            "--invite",
            "7kq2-m9xo",
        ]
    )
    assert args.listen == "tcp://127.0.0.1:47400"
    assert [peer.endpoint for peer in args.peer] == ["tcp://10.0.0.2:47401"]
    assert args.faults == FaultPlan(0.05, 0.0, 0.0, 200.0, -7)
    assert (args.bots, args.think, args.timeout, args.autoplay) == (4, 0.0, 0.5, 1.0)
    assert args.invite == "7KQ2M9X0"  # as typed from a screen: any case, a dash, O for 0


def test_a_silence_after_seeing_ones_cards_costs_by_default(tmp_path: Path) -> None:
    """``--silence``: a new table's rule is ``after-seeing`` unless the opener says otherwise;
    the rules of before are still offered."""
    assert parse(["--home", str(tmp_path / "anne")]).silence == "after-seeing"
    for rule in ("nothing", "penalty", "after-seeing"):
        assert parse(["--home", str(tmp_path / "anne"), "--silence", rule]).silence == rule


# --- scripts/play and tarot -----------------------------------------------------------------


@pytest.mark.daemons
@pytest.mark.parametrize(
    "argv, said",
    [
        (["--players", "7"], "argument --players: '7' is not 3, 4 or 5"),
        (["--players"], "--players needs a value"),
        (["--lang", "de"], "argument --lang: 'de' is not fr or en"),
        (["--name", ""], "argument --name: the name is empty"),
        (["--home", ""], "argument --home: empty: give a directory"),
        (
            ["--think", "-1"],
            "argument --think: -1 is out of range: give a number of seconds 0 or more",
        ),
        (["--think", "soon"], "argument --think: 'soon' is not a number of seconds"),
        (["--colour", "red"], "unknown option --colour"),
    ],
)
def test_scripts_play_refuses_a_bad_value_before_it_starts_anything(
    tmp_path: Path, argv: list[str], said: str
) -> None:
    """It used to hand ``--think -1`` and ``--name ""`` to daemons it had already started, and
    ``--players`` with no value ended it with status 1 and not a word."""
    env = {
        **os.environ,
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "TAROT_VENV": sys.prefix,
    }  # this test's interpreter
    result = subprocess.run(
        [str(ROOT / "scripts" / "play"), *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert said in refused(result, "scripts/play")
    assert not (tmp_path / "state").exists()  # no run directory, no daemon


@pytest.mark.daemons
def test_tarot_refuses_an_empty_home() -> None:
    """``--home ""`` was the current directory: "no daemon is running with the home ."."""
    result = subprocess.run(
        [sys.executable, "-m", "client.cli", "--home", "", "status"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert "argument --home: empty: give the daemon's home directory" in refused(result, "tarot")
