"""The physical deal: packets counter-clockwise from the dealer's right,
chien cards one at a time."""

import pytest

from protocol.rules.layout import CHIEN, deal_layout
from protocol.rules.variants import VARIANTS, variant


@pytest.mark.parametrize("players", [3, 4, 5])
def test_every_seat_gets_its_hand_and_the_chien_is_never_first_or_last(players: int) -> None:
    v = variant(players)
    for dealer in range(players):
        layout = deal_layout(v, dealer)
        assert len(layout.owner) == 78
        for seat in range(players):
            assert len(layout.positions_of(seat)) == v.hand_size
        assert len(layout.chien_positions) == v.chien_size
        assert layout.owner[0] != CHIEN and layout.owner[-1] != CHIEN
        assert layout.owner[0] == (dealer + 1) % players  # the player at the dealer's right first


@pytest.mark.parametrize("players", [3, 4, 5])
def test_packets_of_three_or_four_and_chien_cards_single(players: int) -> None:
    v = VARIANTS[players]
    layout = deal_layout(v, 0)
    runs: list[tuple[int, int]] = []
    for owner in layout.owner:
        if runs and runs[-1][0] == owner and owner != CHIEN:
            runs[-1] = (owner, runs[-1][1] + 1)
        else:
            runs.append((owner, 1))
    assert {length for owner, length in runs if owner != CHIEN} == {v.packet}
    assert all(length == 1 for owner, length in runs if owner == CHIEN)
    # no two chien cards in a row
    assert all(not (a == CHIEN and b == CHIEN) for a, b in zip(layout.owner, layout.owner[1:]))


def test_bad_dealer_or_table_size_is_refused() -> None:
    with pytest.raises(ValueError):
        deal_layout(variant(4), 4)
    with pytest.raises(ValueError, match="3, 4 or 5"):
        variant(6)
