"""A terminal screen as a person sees it: ``tmux capture-pane -e`` text (its escape codes kept)
drawn on a dark or a light terminal, and the WCAG contrast of every character against the
background it sits on — for the tests that check the client is readable on both, and for
``scripts/screenshots`` pictures.

Only what tmux emits is understood: SGR codes (bold, reverse, the 16 ANSI colours, 256-colour
and 24-bit ones).  The 16 ANSI colours are the terminal's own palette: the dark terminal here
is xterm's palette on black, the light one the same palette on white (what ``xterm``,
``gnome-terminal`` and macOS Terminal ship), so a style that leans on them is caught.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

RGB = tuple[int, int, int]

#: xterm's 16 colours, as most terminals ship them.
XTERM = (
    (0x00, 0x00, 0x00),
    (0xCD, 0x00, 0x00),
    (0x00, 0xCD, 0x00),
    (0xCD, 0xCD, 0x00),
    (0x00, 0x00, 0xEE),
    (0xCD, 0x00, 0xCD),
    (0x00, 0xCD, 0xCD),
    (0xE5, 0xE5, 0xE5),
    (0x7F, 0x7F, 0x7F),
    (0xFF, 0x00, 0x00),
    (0x00, 0xFF, 0x00),
    (0xFF, 0xFF, 0x00),
    (0x5C, 0x5C, 0xFF),
    (0xFF, 0x00, 0xFF),
    (0x00, 0xFF, 0xFF),
    (0xFF, 0xFF, 0xFF),
)
#: WCAG's threshold for text: a contrast ratio of at least 4.5 against its background.
READABLE = 4.5


@dataclass(frozen=True)
class Theme:
    """A terminal's colours: its default foreground and background, and its 16 colours."""

    name: str
    fg: RGB
    bg: RGB
    palette: tuple[RGB, ...] = XTERM


DARK = Theme("dark", (0xE5, 0xE5, 0xE5), (0x00, 0x00, 0x00))
LIGHT = Theme("light", (0x00, 0x00, 0x00), (0xFF, 0xFF, 0xFF))
THEMES = (DARK, LIGHT)


@dataclass(frozen=True)
class Pen:
    """The SGR state: colours as ``("default",)``, ``("ansi", n)`` (0–255) or
    ``("rgb", r, g, b)``."""

    fg: tuple[object, ...] = ("default",)
    bg: tuple[object, ...] = ("default",)
    bold: bool = False
    reverse: bool = False


@dataclass(frozen=True)
class Cell:
    char: str
    pen: Pen


_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def _sgr(pen: Pen, params: str) -> Pen:
    codes = [int(p) if p else 0 for p in params.split(";")]
    i = 0
    while i < len(codes):
        code = codes[i]
        if code == 0:
            pen = Pen()
        elif code == 1:
            pen = replace(pen, bold=True)
        elif code == 22:
            pen = replace(pen, bold=False)
        elif code == 7:
            pen = replace(pen, reverse=True)
        elif code == 27:
            pen = replace(pen, reverse=False)
        elif 30 <= code <= 37 or 90 <= code <= 97:
            pen = replace(pen, fg=("ansi", code - 30 if code < 90 else code - 82))
        elif 40 <= code <= 47 or 100 <= code <= 107:
            pen = replace(pen, bg=("ansi", code - 40 if code < 100 else code - 92))
        elif code == 39:
            pen = replace(pen, fg=("default",))
        elif code == 49:
            pen = replace(pen, bg=("default",))
        elif code in (38, 48) and i + 1 < len(codes):
            if codes[i + 1] == 5 and i + 2 < len(codes):
                colour: tuple[object, ...] = ("ansi", codes[i + 2])
                i += 2
            elif codes[i + 1] == 2 and i + 4 < len(codes):
                colour = ("rgb", *codes[i + 2 : i + 5])
                i += 4
            else:
                colour = ("default",)
            pen = replace(pen, fg=colour) if code == 38 else replace(pen, bg=colour)
        i += 1
    return pen


def cells(captured: str) -> list[list[Cell]]:
    """The screen's characters, each with the SGR state it was drawn in (tmux carries the
    state over line ends)."""
    pen, rows = Pen(), []
    for line in captured.split("\n"):
        row: list[Cell] = []
        at = 0
        for match in _SGR.finditer(line):
            row += [Cell(ch, pen) for ch in line[at : match.start()]]
            pen, at = _sgr(pen, match.group(1)), match.end()
        row += [Cell(ch, pen) for ch in _strip_other_escapes(line[at:])]
        rows.append(row)
    return rows


def _strip_other_escapes(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def _colour(colour: tuple[object, ...], default: RGB, theme: Theme) -> RGB:
    if colour[0] == "default":
        return default
    if colour[0] == "rgb":
        r, g, b = (int(str(v)) for v in colour[1:4])
        return (r, g, b)
    n = int(str(colour[1]))
    if n < 16:
        return theme.palette[n]
    if n < 232:
        levels = (0x00, 0x5F, 0x87, 0xAF, 0xD7, 0xFF)
        n -= 16
        return (levels[n // 36], levels[n // 6 % 6], levels[n % 6])
    grey = 8 + 10 * (n - 232)
    return (grey, grey, grey)


def colours(pen: Pen, theme: Theme) -> tuple[RGB, RGB]:
    """(foreground, background) of a character drawn with ``pen`` on ``theme``."""
    fg, bg = _colour(pen.fg, theme.fg, theme), _colour(pen.bg, theme.bg, theme)
    return (bg, fg) if pen.reverse else (fg, bg)


def luminance(rgb: RGB) -> float:
    """WCAG relative luminance."""

    def linear(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: RGB, b: RGB) -> float:
    """WCAG contrast ratio, 1 to 21."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@dataclass(frozen=True)
class Unreadable:
    row: int
    col: int
    text: str  #: the run of characters drawn alike
    ratio: float
    theme: str

    def __str__(self) -> str:
        return (
            f"{self.theme}: {self.text!r} at row {self.row}, column {self.col}: "
            f"contrast {self.ratio:.2f} < {READABLE}"
        )


def unreadable(captured: str, theme: Theme) -> Iterator[Unreadable]:
    """Every run of visible characters whose contrast with its background is below
    :data:`READABLE` on ``theme``."""
    for r, row in enumerate(cells(captured)):
        c = 0
        while c < len(row):
            cell = row[c]
            end = c
            while end < len(row) and row[end].pen == cell.pen:
                end += 1
            text = "".join(x.char for x in row[c:end])
            if text.strip():
                fg, bg = colours(cell.pen, theme)
                ratio = contrast(fg, bg)
                if ratio < READABLE:
                    yield Unreadable(r, c, text.strip(), ratio, theme.name)
            c = end


def plain(captured: str) -> str:
    """The captured screen without its escape codes."""
    return "\n".join("".join(cell.char for cell in row).rstrip() for row in cells(captured))
