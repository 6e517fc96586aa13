"""Named source mutations of the deck's verifiers, provers and key derivation (``scripts/mutants``).

Each :class:`Mutant` is a small change a careless edit could make — an equation left out of a
proof's final hash, the outputs left out of its statement, keys derived with a relation, a
list's length unchecked — that leaves an honest deal working.  Each is applied to a temporary
copy of the tree (never to the tree itself: others work in it), the tests named for it are run
against the copy, and it must be *killed*: some test must fail.  A mutant that survives means a
test is missing.

Edits are ``(file, exact old snippet, new snippet)``; a snippet that no longer matches (the
source moved on) is reported as *stale*, naming the file and the snippet, and counts as a
failure like a survivor: a mutant that cannot be applied guards nothing.  The unmutated copy is
run first: a test that fails without a mutant would kill every mutant and prove nothing.

    python -m lab.mutants [--list] [--markdown] [--keep] [--commit REV] [NAME ...]
        [--against TEST ...]
"""

from __future__ import annotations

import argparse
import enum
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SOUNDNESS = "tests/test_soundness.py"
PROOFS = "tests/test_proofs.py"
METADATA = "tests/test_deck_metadata.py"
SECRECY = (
    "tests/test_deck_secrecy.py::test_no_coalition_opens_a_hidden_card_with_keys_of_other_places"
)

SYMBOLIC = (
    "tests/test_deck_secrecy.py::test_no_coalition_can_strip_a_hidden_card_of_its_last_factor"
)
SHUFFLE = "protocol/deck/shuffle_proof.py"
LOCK = "protocol/deck/lock_proof.py"
PROOF_COMMON = "protocol/deck/proofs.py"
SEEDS = "protocol/deck/seeds.py"
PUBLIC_DECK = "protocol/deck/public_deck.py"
SEAT_DECK = "protocol/deck/seat_deck.py"

_SHUFFLE_HASH = "return hash_to_int(DOMAIN, digest, *commitments, *chain, *summary, *links)"
_LOCK_HASH = "return hash_to_int(DOMAIN, digest, *links, *key_commitments, blanket_commitment)"
_LOCK_KEYS = "lock_keys=deriver.scalars(LOCK_LABEL, DECK_SIZE),"
#: ℓ, the order of both ristretto255 and Ed25519's prime-order subgroup.
_ORDER = "(2**252 + 27742317777372353535851937790883648493)"
_ONE = '(1).to_bytes(32, "little")'


@dataclass(frozen=True)
class Edit:
    file: str  #: relative to the tree
    old: str  #: exact text, found exactly once
    new: str


@dataclass(frozen=True)
class Mutant:
    name: str
    breaks: str  #: what the mutation does, in a few words
    edits: tuple[Edit, ...]
    tests: tuple[str, ...]  #: pytest arguments: the tests that should kill it


def _shuffle_hash(kept: str) -> Edit:
    return Edit(
        SHUFFLE, _SHUFFLE_HASH, f"return hash_to_int(DOMAIN, digest, *commitments, *chain, {kept})"
    )


def _lock_hash(kept: str) -> Edit:
    return Edit(LOCK, _LOCK_HASH, f"return hash_to_int(DOMAIN, digest, {kept})")


def _unchecked_length(file: str, line: str) -> Edit:
    return Edit(file, f"        {line}\n", "")


_PROOF_TESTS = (SOUNDNESS, PROOFS)
_KEY_TESTS = (METADATA, SECRECY, SYMBOLIC)

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "shuffle-rows-unchecked",
        "the shuffle's rows equation (t1) out of its final hash",
        (_shuffle_hash("*summary[1:], *links"),),
        _PROOF_TESTS,
    ),
    Mutant(
        "shuffle-chain-end-unchecked",
        "the shuffle's chain-end equation (t2) out of its final hash",
        (_shuffle_hash("*summary[:1], *summary[2:], *links"),),
        _PROOF_TESTS,
    ),
    Mutant(
        "shuffle-opening-unchecked",
        "the shuffle's opening equation (t3) out of its final hash",
        (_shuffle_hash("*summary[:2], *summary[3:], *links"),),
        _PROOF_TESTS,
    ),
    Mutant(
        "shuffle-points-unchecked",
        "the shuffle's points equation (t4) out of its final hash",
        (_shuffle_hash("*summary[:3], *summary[4:], *links"),),
        _PROOF_TESTS,
    ),
    Mutant(
        "shuffle-blanket-unchecked",
        "the shuffle's blanket equation (t5) out of its final hash",
        (_shuffle_hash("*summary[:4], *links"),),
        _PROOF_TESTS,
    ),
    Mutant(
        "shuffle-links-unchecked",
        "the shuffle's chain links out of its final hash",
        (_shuffle_hash("*summary"),),
        _PROOF_TESTS,
    ),
    Mutant(
        "shuffle-outputs-out-of-digest",
        "the shuffle's outputs out of its Fiat-Shamir statement",
        (
            Edit(
                SHUFFLE,
                "binding, blanket_public, tuple(before), tuple(after))",
                "binding, blanket_public, tuple(before), ())",
            ),
        ),
        _PROOF_TESTS,
    ),
    Mutant(
        "lock-outputs-out-of-digest",
        "the lock's locked points out of its Fiat-Shamir statement",
        (
            Edit(
                LOCK,
                "tuple(before), tuple(commitments), tuple(locked)",
                "tuple(before), tuple(commitments), ()",
            ),
        ),
        _PROOF_TESTS,
    ),
    Mutant(
        "lock-links-unchecked",
        "the lock's per-position equations (Tj) out of its hash",
        (_lock_hash("*key_commitments, blanket_commitment"),),
        _PROOF_TESTS,
    ),
    Mutant(
        "lock-key-commitments-unchecked",
        "the lock's key-commitment equations (Uj) out of its hash",
        (_lock_hash("*links, blanket_commitment"),),
        _PROOF_TESTS,
    ),
    Mutant(
        "lock-blanket-unchecked",
        "the lock's blanket equation (V) out of its hash",
        (_lock_hash("*links, *key_commitments"),),
        _PROOF_TESTS,
    ),
    Mutant(
        "shuffle-chain-responses-length",
        "verify_shuffle without the chain responses' length (zip cuts)",
        (_unchecked_length(SHUFFLE, "(proof.chain_responses, SCALAR_BYTES, n),"),),
        (SOUNDNESS,),
    ),
    Mutant(
        "shuffle-opening-responses-length",
        "verify_shuffle without the opening responses' length",
        (_unchecked_length(SHUFFLE, "(proof.opening_responses, SCALAR_BYTES, n),"),),
        (SOUNDNESS,),
    ),
    Mutant(
        "shuffle-summary-length",
        "verify_shuffle without the summary's length",
        (_unchecked_length(SHUFFLE, "(proof.summary, SCALAR_BYTES, SUMMARY_RESPONSES),"),),
        (SOUNDNESS,),
    ),
    Mutant(
        "shuffle-commitments-shape",
        "verify_shuffle without the commitments' shape",
        (_unchecked_length(SHUFFLE, "(proof.commitments, POINT_BYTES, n),"),),
        (SOUNDNESS,),
    ),
    Mutant(
        "lock-key-responses-length",
        "verify_lock without the key responses' length",
        (_unchecked_length(LOCK, "(proof.key_responses, SCALAR_BYTES, n),"),),
        (SOUNDNESS,),
    ),
    Mutant(
        "deal-keys-count-unchecked",
        "a seat's deal keys taken without counting them (zip cuts)",
        (
            Edit(
                PUBLIC_DECK,
                "positions = self.setup.dealt_to_others(p.seat)\n        if len(p.keys) != "
                "len(positions):",
                "positions = self.setup.dealt_to_others(p.seat)\n        if not p.keys:",
            ),
        ),
        (SOUNDNESS,),
    ),
    Mutant(
        "chien-keys-count-unchecked",
        "a seat's chien keys taken without counting them (zip cuts)",
        (
            Edit(
                PUBLIC_DECK,
                "positions = self.setup.layout.chien_positions\n        if len(p.keys) != "
                "len(positions):",
                "positions = self.setup.layout.chien_positions\n        if not p.keys:",
            ),
        ),
        (SOUNDNESS,),
    ),
    Mutant(
        "ecart-order-sorted",
        "the taker's re-commitments in the cards' sorted order",
        (Edit(SEAT_DECK, "committed = [cards[k] for k in s.recommit_order]", "committed = cards"),),
        (METADATA,),
    ),
    Mutant(
        "lock-keys-known-factor",
        "lock keys b_j = (j+1)*b_0: one key published opens other places",
        (
            Edit(
                SEEDS,
                _LOCK_KEYS,
                "lock_keys=tuple((int.from_bytes(deriver.scalars(LOCK_LABEL, 1)[0], 'little')"
                f" * (j + 1) % {_ORDER}).to_bytes(32, 'little') for j in range(DECK_SIZE)),",
            ),
        ),
        _KEY_TESTS,
    ),
    Mutant(
        "lock-key-one",
        "the first lock key 1",
        (
            Edit(
                SEEDS,
                _LOCK_KEYS,
                f"lock_keys=({_ONE}, *deriver.scalars(LOCK_LABEL, DECK_SIZE)[1:]),",
            ),
        ),
        _KEY_TESTS,
    ),
    Mutant(
        "repeated-lock-keys",
        "one lock key for every place",
        (Edit(SEEDS, _LOCK_KEYS, "lock_keys=deriver.scalars(LOCK_LABEL, 1) * DECK_SIZE,"),),
        _KEY_TESTS,
    ),
    Mutant(
        "recommit-keys-one",
        "the re-commitment keys all 1",
        (
            Edit(
                SEEDS,
                "recommit_keys=deriver.scalars(RECOMMIT_KEYS_LABEL, recommits),",
                f"recommit_keys=({_ONE},) * recommits,",
            ),
        ),
        _KEY_TESTS,
    ),
    Mutant(
        "blanket-key-one",
        "the blanket key 1: a shuffle that re-keys nothing",
        (
            Edit(
                SEEDS,
                "(blanket,) = deriver.scalars(BLANKET_LABEL, 1)",
                f"blanket = {_ONE}",
            ),
        ),
        _KEY_TESTS,
    ),
    Mutant(
        "shuffle-swaps-nothing",
        "Fisher-Yates that never swaps: every shuffle the identity",
        (Edit(SEEDS, "pick = byte % bound", "pick = top"),),
        (METADATA,),
    ),
    Mutant(
        "public-proof-nonce",
        "the proofs' nonces without the seat's nonce key",
        (
            Edit(
                PROOF_COMMON, "NONCE_DOMAIN, self._key, self._digest", "NONCE_DOMAIN, self._digest"
            ),
        ),
        (SOUNDNESS,),
    ),
    Mutant(
        "repeated-proof-nonces",
        "one nonce for every position of a proof (label only)",
        (
            Edit(
                PROOF_COMMON,
                'self._digest, label, k.to_bytes(2, "big"))',
                "self._digest, label, bytes(2))",
            ),
        ),
        (SOUNDNESS, SECRECY),
    ),
    Mutant(
        "public-commitment-randomness",
        "the shuffle commitments' randomness from the public statement",
        (Edit(SHUFFLE, 'r = nonces.take(b"r", n)', 'r = challenges(digest, b"r", n)'),),
        (SOUNDNESS,),
    ),
)


class Outcome(enum.Enum):
    KILLED = "killed"
    SURVIVED = "SURVIVED"
    STALE = "STALE"  #: a snippet no longer matches the source


@dataclass(frozen=True)
class Result:
    mutant: Mutant
    outcome: Outcome
    by: str  #: the first failing test, or why the mutant is stale
    seconds: float


def _copy(tree: Path, commit: str | None = None) -> None:
    """The working tree (uncommitted changes too) into ``tree``, or ``commit``'s files."""
    if commit is not None:
        tree.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", commit], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
        return
    shutil.copytree(
        ROOT,
        tree,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "__pycache__", "*.egg-info", ".*_cache", ".hypothesis", "benchmarks"
        ),
    )


def _environment(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}


def _pytest(tree: Path, tests: Sequence[str]) -> tuple[bool, str]:
    """Run ``tests`` in ``tree``: (all passed, the first failing test and how many others
    failed, or the output's tail)."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        cwd=tree,
        env=_environment(tree),
        capture_output=True,
        text=True,
    )
    if done.returncode == 0:
        return True, ""
    failed = re.findall(r"^(?:FAILED|ERROR) (.+?)(?: - |$)", done.stdout, re.MULTILINE)
    tail = (done.stdout + done.stderr).strip().splitlines()[-1:] or ["(no output)"]
    if not failed:
        return False, f"exit {done.returncode}: {tail[0]}"
    return False, failed[0] + (f" (+{len(failed) - 1} more)" if len(failed) > 1 else "")


def _apply(tree: Path, mutant: Mutant) -> dict[Path, str] | str:
    """The mutant's edits in ``tree``: the original text of each file changed, or why a
    snippet does not apply (nothing changed then)."""
    texts: dict[Path, str] = {}
    for edit in mutant.edits:
        path = tree / edit.file
        text = texts.get(path, path.read_text())
        if text.count(edit.old) != 1:
            found = "not found" if edit.old not in text else "found more than once"
            return f"snippet {found} in {edit.file}: {edit.old.strip()[:60]!r}"
        texts[path] = text.replace(edit.old, edit.new)
    originals = {path: path.read_text() for path in texts}
    for path, text in texts.items():
        path.write_text(text)
    return originals


def run(mutants: Sequence[Mutant], tree: Path) -> list[Result]:
    """Each mutant applied to ``tree`` (a copy), its tests run, the file put back."""
    results = []
    for mutant in mutants:
        start = time.monotonic()
        applied = _apply(tree, mutant)
        if isinstance(applied, str):
            results.append(Result(mutant, Outcome.STALE, applied, 0.0))
        else:
            try:
                passed, by = _pytest(tree, mutant.tests)
            finally:
                for path, text in applied.items():
                    path.write_text(text)
            outcome = Outcome.SURVIVED if passed else Outcome.KILLED
            results.append(Result(mutant, outcome, by, time.monotonic() - start))
        _report(results[-1])
    return results


def _report(result: Result) -> None:
    by = result.by or "— no test failed"
    print(
        f"{result.mutant.name:34} {result.outcome.value:9} {result.seconds:6.1f} s  {by}",
        flush=True,
    )


def table(results: Sequence[Result]) -> str:
    """The results as a Markdown table (for docs/testing.md)."""
    rows = [
        "| mutant | what it breaks | killed by | time |",
        "|---|---|---|---|",
    ]
    for r in results:
        test, _, more = r.by.removeprefix("tests/").partition(" (")
        if r.outcome is Outcome.KILLED:
            killer = f"`{test}`" + (f" ({more}" if more else "")
        else:
            killer = f"**{r.outcome.value}** {r.by}"
        rows.append(f"| `{r.mutant.name}` | {r.mutant.breaks} | {killer} | {r.seconds:.1f} s |")
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/mutants", description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="mutants to run (all by default)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--markdown", action="store_true", help="print the table in Markdown")
    parser.add_argument("--keep", action="store_true", help="keep the temporary tree")
    parser.add_argument(
        "--commit", metavar="REV", help="mutate this commit's files, not the working tree"
    )
    parser.add_argument(
        "--against",
        nargs="+",
        metavar="TEST",
        help="run these tests against every mutant instead of its own (to see what a suite misses)",
    )
    args = parser.parse_args(argv)
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:34} {m.breaks}")
        return 0
    unknown = set(args.names) - {m.name for m in MUTANTS}
    if unknown:
        parser.error(f"no such mutant: {', '.join(sorted(unknown))}")
    chosen = [m for m in MUTANTS if not args.names or m.name in args.names]
    if args.against:
        chosen = [replace(m, tests=tuple(args.against)) for m in chosen]
    tree = Path(tempfile.mkdtemp(prefix="tarot-mutants-")) / "tree"
    try:
        _copy(tree, args.commit)
        tests = sorted({test for m in chosen for test in m.tests})
        print(f"the unmutated tree ({tree}), {' '.join(tests)}", flush=True)
        start = time.monotonic()
        passed, by = _pytest(tree, tests)
        if not passed:
            print(f"the tests fail without any mutant ({by}): nothing to measure", file=sys.stderr)
            return 2
        print(f"  all pass ({time.monotonic() - start:.1f} s)\n", flush=True)
        results = run(chosen, tree)
    finally:
        if args.keep:
            print(f"kept {tree}")
        else:
            shutil.rmtree(tree.parent, ignore_errors=True)
    if args.markdown:
        print("\n" + table(results))
    bad = [r for r in results if r.outcome is not Outcome.KILLED]
    print(f"\n{len(results) - len(bad)} of {len(results)} mutants killed", end="")
    print("" if not bad else f"; not killed: {', '.join(r.mutant.name for r in bad)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
