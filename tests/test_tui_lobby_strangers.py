"""The client's lobby and strangers' offers (issue 36, item 3): an offer the daemon lists as
unverified — a daemon we have no trust in opened it, and it proved no code of ours — is shown
apart, under a heading that says so, marked on its line, in French and in English; Enter on it
asks for its code instead of joining, and what its opener said of a code we gave it is shown."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from prompt_toolkit.formatted_text import fragment_list_to_text

from client.tui.app import TarotApp
from client.tui.i18n import Texts
from client.tui.lobby import lobby_fragments
from client.tui.model import Model
from tarotd.lobby import OfferState

FRIEND = {
    "table": "ab" * 16,
    "name": "club",
    "seats": 3,
    "members": ["alice"],
    "state": "open",
    "silence": "nothing",
    "invite": None,
    "verified": True,
    "refused": None,
}
FAKE = {**FRIEND, "table": "cd" * 16, "name": "club1", "verified": False}


@pytest.mark.parametrize(
    "lang, heading, mark, refused",
    [
        (
            "en",
            "Unverified — opened by daemons you do not know",
            "(unverified)",
            "it is not its code",
        ),
        (
            "fr",
            "Non vérifiées — ouvertes par des inconnus",
            "(non vérifiée)",
            "ce n'est pas le sien",
        ),
    ],
)
def test_an_unverified_offer_is_shown_apart_and_marked(
    lang: str, heading: str, mark: str, refused: str
) -> None:
    model = Model(Texts(lang), Path("/home/ana/.local/share/tarot"))
    model.status = {"name": "bob"}
    model.tables = [FRIEND, {**FAKE, "refused": "code"}]
    lines = fragment_list_to_text(lobby_fragments(model)).splitlines()
    friend = next(i for i, line in enumerate(lines) if "club " in line and "alice" in line)
    apart = next(i for i, line in enumerate(lines) if heading in line)
    fake = next(i for i, line in enumerate(lines) if "club1" in line)
    assert friend < apart < fake
    assert mark in lines[fake] and refused in lines[fake] and mark not in lines[friend]


def joining(table: dict[str, Any]) -> tuple[SimpleNamespace, list[dict[str, Any]]]:
    """Just what ``TarotApp._join_selected`` uses: the table under the cursor, the model, and
    the requests it sends."""
    sent: list[dict[str, Any]] = []
    app = SimpleNamespace(
        model=SimpleNamespace(invite=None),
        _selected=lambda: table,
        _send=lambda op, done, **params: sent.append({"op": op, **params}),
    )
    return app, sent


def test_enter_on_an_unverified_offer_asks_for_its_code_and_never_joins_without() -> None:
    app, sent = joining(FAKE)
    TarotApp._join_selected(app)  # type: ignore[arg-type]
    assert sent == [] and app.model.invite == ""  # the prompt for the code is open
    TarotApp._join_selected(app, "H4NP-3WRC")  # type: ignore[arg-type]
    assert sent == [{"op": "join", "table": FAKE["table"], "invite": "H4NP-3WRC"}]
    app, sent = joining(FRIEND)
    TarotApp._join_selected(app)  # type: ignore[arg-type]
    assert sent == [{"op": "join", "table": FRIEND["table"], "invite": None}]


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_every_state_of_a_table_in_the_lobby_is_said_in_the_players_language(lang: str) -> None:
    """The lobby shows each table's state (:class:`tarotd.lobby.OfferState`) by its text: a
    state without one reached a French player as the daemon's English word."""
    texts = Texts(lang)
    for state in OfferState:
        assert f"lobby_state_{state.value}" in texts.keys(), state
