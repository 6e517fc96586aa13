"""Lines broken between words, never inside one: a panel beside the table is 34 columns at
100, and a window that wraps by itself cuts "+56" into "+5" and "6", "deals" into "deal" and
"s".  A line too long for its window is broken at the last space that fits (a word longer
than the whole width is cut, as nothing else can hold it), the fragments' styles kept."""

from __future__ import annotations

from prompt_toolkit.formatted_text import OneStyleAndTextTuple, StyleAndTextTuples
from prompt_toolkit.utils import get_cwidth


def spans(text: str, width: int) -> list[tuple[int, int]]:
    """The (start, end) of each row ``text`` takes in ``width`` columns, broken between words:
    the space a row breaks at belongs to no row."""
    width, start, out = max(1, width), 0, []
    while get_cwidth(text[start:]) > width:
        cut = start + _fit(text[start:], width)
        space = text.rfind(" ", start, cut + 1)
        if space > start:
            out.append((start, space))
            start = space + 1
        else:  # one word wider than the window
            out.append((start, cut))
            start = cut
    out.append((start, len(text)))
    return out


def wrap_text(line: str, width: int) -> list[str]:
    """``line`` as the rows it takes in ``width`` columns."""
    return [line[start:end] for start, end in spans(line, width)]


def _fit(line: str, width: int) -> int:
    """How many characters of ``line`` fit ``width`` columns (one at least)."""
    used = 0
    for index, char in enumerate(line):
        used += get_cwidth(char)
        if used > width:
            return max(1, index)
    return len(line)


def wrap_fragments(fragments: StyleAndTextTuples, width: int) -> StyleAndTextTuples:
    """``fragments`` with a line break between two words wherever a line is wider than
    ``width``; each fragment keeps its style (and mouse handler)."""
    out: StyleAndTextTuples = []
    line: list[OneStyleAndTextTuple] = []
    for fragment in fragments:
        parts = fragment[1].split("\n")
        for number, part in enumerate(parts):
            if part:
                line.append(_with_text(fragment, part))
            if number < len(parts) - 1:
                out += _broken(line, width)
                out.append(("", "\n"))
                line = []
    return out + _broken(line, width)


def _broken(line: list[OneStyleAndTextTuple], width: int) -> StyleAndTextTuples:
    text = "".join(fragment[1] for fragment in line)
    rows = spans(text, width)
    if len(rows) == 1:
        return list(line)
    row_of = [-1] * len(text)  # each character's row; -1 for a space a row breaks at
    for number, (start, end) in enumerate(rows):
        row_of[start:end] = [number] * (end - start)
    out: StyleAndTextTuples = []
    row, position = 0, 0
    for fragment in line:
        piece, begin = fragment[1], position
        position += len(piece)
        index = begin
        while index < position:
            here = row_of[index]
            stop = index
            while stop < position and row_of[stop] == here:
                stop += 1
            if here >= 0:
                if here > row:
                    out.append(("", "\n"))
                    row = here
                out.append(_with_text(fragment, piece[index - begin : stop - begin]))
            index = stop
    return out


def _with_text(fragment: OneStyleAndTextTuple, text: str) -> OneStyleAndTextTuple:
    if len(fragment) == 3:
        return (fragment[0], text, fragment[2])
    return (fragment[0], text)
