"""The examples in the docstrings of the rules' public API run, python-chess style: an example
that no longer says what the code does fails here."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

MODULES = [
    "protocol.rules.cards",
    "protocol.rules.variants",
    "protocol.rules.rules",
    "protocol.rules.deal",
    "protocol.rules.scoring",
    "protocol.refusal",
    "client.tui.i18n",
]


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_of_the_docstrings_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), report=True)
    assert result.failed == 0, f"{result.failed} example(s) of {name} failed (see above)"
    assert result.attempted > 0, f"{name} has no example"


def test_the_examples_of_the_rules_page_run() -> None:
    page = Path(__file__).parent.parent / "docs" / "rules.md"
    result = doctest.testfile(str(page), module_relative=False, report=True)
    assert result.failed == 0 and result.attempted > 0
