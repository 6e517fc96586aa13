"""The lab apart from the product (issue 38, item 5): ``protocol``, ``tarotd`` and ``client``
name no module of ``lab`` anywhere — not at load, not inside a function, not as a string to
import.  What the lab adds to the programs (``tarot bench``, the cheats of ``--cheat``) it
plugs in through one hook, the entry points its package declares (``protocol/plugins.py``):
these tests show the hook is what finds them, and that without it the programs say why."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import lab
import lab.bench.cmd
import lab.cheats.attacks
import protocol.plugins
from client.cli import main as tarot
from tarotd.cli import parse as tarotd_parse

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("protocol", "tarotd", "client")

#: A string that names a module of the lab (``"lab.bench.cmd"``, ``"lab.cheats.attacks:LAB"``).
LAB_NAME = re.compile(r"lab(\.\w+)+(:\w+)?")


def lab_names(path: Path) -> set[str]:
    """What ``path`` imports of the lab or names of it in a string, anywhere in the module."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "lab")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            if node.module.split(".")[0] == "lab":
                found.add(node.module)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if LAB_NAME.fullmatch(node.value):
                found.add(node.value)
    return found


def _product_modules() -> Iterator[Path]:
    for package in PRODUCT:
        yield from sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("path", list(_product_modules()), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_product_names_nothing_of_the_lab(path: Path) -> None:
    assert lab_names(path) == set()


def test_the_walk_sees_every_way_of_naming_the_lab(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text(
        "import lab.tmux\n"
        "def later():\n    from lab.bench import cmd\n"
        "if TYPE_CHECKING:\n    import lab\n"
        "NAME = 'lab.cheats.attacks'\n"
        "TEXT = 'the lab, in a sentence'\n"
    )
    assert lab_names(module) == {"lab.tmux", "lab.bench", "lab", "lab.cheats.attacks"}


def test_the_hook_is_what_finds_the_lab() -> None:
    """The entry points pyproject.toml declares are those the programs load."""
    assert protocol.plugins.cheat_lab() is lab.cheats.attacks.LAB
    assert protocol.plugins.commands() == {"bench": lab.bench.cmd}
    assert set(protocol.plugins.LAB_COMMANDS) == set(protocol.plugins.commands())


@pytest.fixture
def without_the_lab(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The programs as a wheel of the product alone sees them: no entry point of the lab."""

    def nothing(**_: str) -> importlib.metadata.EntryPoints:
        return importlib.metadata.EntryPoints(())

    monkeypatch.setattr(protocol.plugins, "entry_points", nothing)
    protocol.plugins.cheat_lab.cache_clear()
    protocol.plugins.commands.cache_clear()
    yield
    protocol.plugins.cheat_lab.cache_clear()
    protocol.plugins.commands.cache_clear()


@pytest.mark.usefixtures("without_the_lab")
def test_without_the_hook_tarot_bench_says_it_is_a_developer_tool_not_installed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert tarot(["bench", "--quick"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("tarot bench: error: tarot bench is a developer tool of the lab")
    assert "not installed" in error
    assert tarot(["--help"]) == 0
    assert "bench" not in capsys.readouterr().out


@pytest.mark.usefixtures("without_the_lab")
def test_without_the_hook_a_cheat_is_refused_with_its_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert tarot(["sim", "--deals", "1", "--cheat", "1:revoke"]) == 2
    assert "--cheat: the cheat lab is a developer tool" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        tarotd_parse(["--cheat", "revoke"])
    assert refused.value.code == 2
    assert "the cheat lab is a developer tool of the lab, not installed" in capsys.readouterr().err


def test_an_entry_point_whose_package_is_not_there_is_the_lab_absent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A wheel built without ``lab/`` but with its entry points declared."""
    missing = importlib.metadata.EntryPoint("lab", "lab_not_here.cheats:LAB", "tarot.cheats")

    def declared(**_: str) -> importlib.metadata.EntryPoints:
        return importlib.metadata.EntryPoints((missing,))

    monkeypatch.setattr(protocol.plugins, "entry_points", declared)
    protocol.plugins.cheat_lab.cache_clear()
    try:
        assert protocol.plugins.cheat_lab() is None
    finally:
        protocol.plugins.cheat_lab.cache_clear()


@pytest.mark.parametrize(
    "name", sorted(info.name for info in pkgutil.walk_packages(lab.__path__, "lab."))
)
def test_every_module_of_the_lab_loads_on_top_of_the_product(name: str) -> None:
    importlib.import_module(name)
