"""``scripts/mutants`` itself: its mutations still apply to the source, and (slow) every one
is killed.

A mutant whose snippet no longer matches guards nothing; the source moves (a renamed domain,
a new group), so the default suite checks that each edit's snippet is still found exactly
once, and that each mutant names tests that exist — cheaply, without running any mutant.
"""

from __future__ import annotations

import pytest

from lab import mutants


@pytest.mark.parametrize("mutant", mutants.MUTANTS, ids=lambda m: m.name)
def test_every_mutant_still_applies_to_the_source(mutant: mutants.Mutant) -> None:
    for edit in mutant.edits:
        text = (mutants.ROOT / edit.file).read_text()
        assert text.count(edit.old) == 1, f"{mutant.name}: stale snippet in {edit.file}"
        assert edit.old != edit.new


@pytest.mark.parametrize("mutant", mutants.MUTANTS, ids=lambda m: m.name)
def test_every_mutant_names_tests_that_exist(mutant: mutants.Mutant) -> None:
    for test in mutant.tests:
        path, _, name = test.partition("::")
        source = (mutants.ROOT / path).read_text()
        assert not name or f"def {name.split('[')[0]}(" in source, test


def test_the_mutant_names_are_unique() -> None:
    names = [m.name for m in mutants.MUTANTS]
    assert len(set(names)) == len(names)


@pytest.mark.daemons
@pytest.mark.slow
def test_every_mutant_is_killed() -> None:
    """The whole run: a few minutes (each mutant's tests in a copy of the tree)."""
    assert mutants.main([]) == 0
