"""``protocol/`` by idea (docs/architecture.md): each sub-package imports only the ideas below
it — the rules nothing else, the bots only the rules, the deck only the rules and the verdicts
it raises — so that a module's place says what it may depend on.  A test of the walk itself
shows it sees an import inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL = ROOT / "protocol"

#: What each sub-package may import of ``protocol``: sub-packages whole, or single modules.
#: ``wire``, the one gate for untrusted bytes, is below them all; ``refusal``, why a request
#: is refused, is the code an event's errors carry to the player.
ALLOWED: dict[str, frozenset[str]] = {
    "rules": frozenset({"wire", "rules"}),
    "deck": frozenset({"wire", "rules", "deck", "replication.verdict", "replication.identity"}),
    "replication": frozenset({"wire", "rules", "deck", "replication"}),
    "bots": frozenset({"wire", "rules", "bots"}),
    "event": frozenset({"wire", "rules", "replication", "event", "refusal"}),
}


def imported(path: Path) -> set[str]:
    """The ``protocol`` modules ``path`` imports anywhere, as ``package.module`` (or
    ``package`` for ``from protocol.package import module``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "protocol" and len(parts) > 1:
                found.add(".".join(parts[1:3]))
    return found


def allowed(package: str, module: str) -> bool:
    rule = ALLOWED[package]
    return module.split(".")[0] in rule or module in rule


@pytest.mark.parametrize(
    "path",
    sorted(p for package in ALLOWED for p in (PROTOCOL / package).glob("*.py")),
    ids=lambda path: str(path.relative_to(ROOT)),
)
def test_a_sub_package_imports_only_the_ideas_below_it(path: Path) -> None:
    package = path.parent.name
    wrong = sorted(m for m in imported(path) if not allowed(package, m))
    assert not wrong, f"{path.relative_to(ROOT)} imports {wrong}, above {package}"


def test_every_module_of_protocol_has_its_place() -> None:
    loose = sorted(p.name for p in PROTOCOL.glob("*.py") if p.name != "__init__.py")
    # wire.py is below every idea: the gate each of them parses a peer's bytes through;
    # plugins.py is where the programs find the lab's commands and cheats; refusal.py, beside
    # the local API's documents, says why a request is refused.
    assert loose == ["localapi.py", "pake.py", "plugins.py", "refusal.py", "wire.py"], (
        "a module belongs in a sub-package by its idea"
    )
    assert {p.name for p in PROTOCOL.iterdir() if p.is_dir() and p.name != "__pycache__"} == set(
        ALLOWED
    )


def test_the_walk_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text("def f():\n    from protocol.deck.group import mul\n")
    assert imported(module) == {"deck.group"}
    assert not allowed("rules", "deck.group") and allowed("deck", "replication.verdict")
