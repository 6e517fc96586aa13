"""The lab apart from the product (issue 24, item 6): ``protocol``, ``tarotd`` and ``client``
load without ``lab``, which imports them.  A product command that starts a lab tool (``tarot
bench``) imports it inside the code that needs it, never at a module's top level, so the
product's modules — and what a player installs and runs — never depend on the lab."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import lab

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("protocol", "tarotd", "client")


def _at_import(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes run when the module is imported: all but the bodies of functions and of
    ``if TYPE_CHECKING:`` (which only the type checker reads)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if _type_checking(child):
            continue
        yield child
        yield from _at_import(child)


def _type_checking(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def _imported_at_import(path: Path) -> set[str]:
    """The top-level packages ``path`` imports when it is imported."""
    found: set[str] = set()
    for node in _at_import(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize(
    "path",
    sorted(path for package in PRODUCT for path in (ROOT / package).rglob("*.py")),
    ids=lambda path: str(path.relative_to(ROOT)),
)
def test_the_product_imports_nothing_of_the_lab_when_it_loads(path: Path) -> None:
    assert "lab" not in _imported_at_import(path)


def test_the_walk_sees_a_top_level_import_and_not_one_inside_a_function(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text("import lab.tmux\n\ndef later():\n    import lab.bench\n")
    assert _imported_at_import(module) == {"lab"}
    module.write_text("def later():\n    from lab import tmux\nif TYPE_CHECKING:\n    import lab\n")
    assert _imported_at_import(module) == set()


@pytest.mark.parametrize(
    "name", sorted(info.name for info in pkgutil.walk_packages(lab.__path__, "lab."))
)
def test_every_module_of_the_lab_loads_on_top_of_the_product(name: str) -> None:
    importlib.import_module(name)
