"""How the screen is shared out at a terminal's size: the table, the panel beside it (the log,
the score sheet) when there is room for both, and the smallest terminal the client draws in.

At 80×24 the panel folds away (Tab shows it in the table's place) so the table keeps its
width; from 100 columns it comes back beside the table, wider as the screen is; a taller
screen spreads the seats.  Below :data:`MIN_COLUMNS` × :data:`MIN_ROWS` the client asks
for a larger terminal instead of drawing a table cut in pieces.
"""

from __future__ import annotations

from dataclasses import dataclass

from prompt_toolkit.formatted_text import StyleAndTextTuples, fragment_list_to_text
from prompt_toolkit.utils import get_cwidth

from client.tui.table import HEIGHT, INFO_LINES, WIDTH

#: The panel beside the table: its narrowest, and its share of a wide screen.
SIDE_MIN, SIDE_MAX = 34, 72
#: The fewest columns and rows the client draws in: the table at five, its info lines, the
#: hand on two lines, the prompt, the status and the help line.
MIN_COLUMNS, MIN_ROWS = 70, 1 + INFO_LINES + HEIGHT + 2 + 3
#: The tallest table: beyond, the rows go to the panel and the margins.
TALLEST = 25


def rows_of(fragments: StyleAndTextTuples, width: int) -> int:
    """The rows ``fragments`` take in a window of ``width`` columns that wraps its lines."""
    lines = fragment_list_to_text(fragments).split("\n")
    return sum(max(1, -(-get_cwidth(line) // max(1, width))) for line in lines)


@dataclass(frozen=True)
class Geometry:
    columns: int
    rows: int

    @property
    def too_small(self) -> bool:
        return self.columns < MIN_COLUMNS or self.rows < MIN_ROWS

    @property
    def side(self) -> int:
        """The width of the panel beside the table; 0 when it folds away."""
        if self.columns < WIDTH + 1 + SIDE_MIN:
            return 0
        return max(SIDE_MIN, min(SIDE_MAX, (self.columns - 1) // 3))

    @property
    def main(self) -> int:
        """The columns left to the table."""
        return self.columns - self.side - 1 if self.side else self.columns

    def table(self, fixed_rows: int) -> tuple[int, int]:
        """The table's (columns, rows) once ``fixed_rows`` are taken by the title, the hand,
        the prompt, the status and the help line."""
        height = max(HEIGHT, min(TALLEST, self.rows - fixed_rows - INFO_LINES))
        return min(self.main, max(WIDTH, height * 6)), height
