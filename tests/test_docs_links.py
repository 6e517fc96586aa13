"""Every relative link of the README and the documents leads somewhere in a clone: to a file
or directory of the repository, and, with a ``#fragment``, to a heading of that file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = sorted(
    [
        ROOT / "README.md",
        ROOT / "CHANGELOG.md",
        ROOT / "benchmarks" / "README.md",
        *(ROOT / "docs").rglob("*.md"),
    ]
)
#: ``[text](target)``, the target up to its closing parenthesis or a title.
LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.DOTALL | re.MULTILINE)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.MULTILINE):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def relative_links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)
    return [target for target in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", target)]


@pytest.mark.parametrize(
    "document", [d for d in DOCUMENTS if d.exists()], ids=lambda d: str(d.relative_to(ROOT))
)
def test_relative_links_resolve(document: Path) -> None:
    broken = []
    for target in relative_links(document):
        file_part, _, fragment = target.partition("#")
        destination = (document.parent / file_part).resolve() if file_part else document
        if not destination.exists() or ROOT not in (destination, *destination.parents):
            broken.append(
                f"{target}: no "
                f"{destination.relative_to(ROOT) if ROOT in destination.parents else destination}"
            )
        elif fragment and destination.suffix == ".md" and fragment not in anchors(destination):
            broken.append(f"{target}: no heading #{fragment} in {destination.relative_to(ROOT)}")
    assert not broken, f"{document.relative_to(ROOT)}: broken links:\n" + "\n".join(broken)


def test_the_documents_are_found() -> None:
    assert ROOT / "README.md" in DOCUMENTS and any(d.parent.name == "docs" for d in DOCUMENTS)
