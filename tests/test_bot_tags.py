"""Bots tagged on every member's screen (issue 37, finding 5): a seat played by a bot of
another daemon (``tarotd --bots N`` there, or an event bot it hosts) is said to be one — its
level — in the member record its own daemon sends, signed in the manifest with its name, and
the daemon's ``state`` gives each seat's level to the client.  A daemon signs no manifest
that calls a person of its a bot, or a bot of its a person: nobody else can say it."""

from __future__ import annotations

import logging

import pytest
from test_lobby import Joined, Network
from test_tui_round_change import app, next_round

from protocol.replication.identity import Identity
from tarotd.lobby import Member, OfferState


def _formed_with_a_remote_bot() -> tuple[Network, bytes, bytes]:
    """Daemon A hosts a person and a bot (``--bots 1``), daemon B a person; A opens, B
    joins: the table of three forms."""
    network = Network([2, 1], seed=2)
    a, b = network.lobbies.values()
    bot = list(a.hosted)[1]
    a.bot_levels[bot] = "strong"
    network.post(a.daemon_key, a.open("club", 3))
    network.run()
    (table,) = b.offers
    network.post(b.daemon_key, b.join(table))
    network.run()
    return network, bot, b.daemon_key


def test_the_bot_of_another_daemon_is_signed_as_one_in_every_members_manifest() -> None:
    network, bot, other = _formed_with_a_remote_bot()
    (ready,) = network.ready[other]  # the daemon that does not host the bot
    levels = {m.key: m.bot for m in ready.members}
    assert levels[bot] == "strong"
    assert sorted(levels.values()) == ["", "", "strong"]  # the persons are persons
    assert {tuple(m.bot for m in r.members) for rs in network.ready.values() for r in rs} == {
        tuple(m.bot for m in ready.members)
    }  # the same signed word at both daemons


def test_a_bot_added_with_b_while_the_table_fills_is_signed_as_one() -> None:
    network = Network([1, 1], seed=6)
    a, b = network.lobbies.values()
    network.post(a.daemon_key, a.open("club", 3))
    network.run()
    (table,) = b.offers
    network.post(b.daemon_key, b.join(table))
    network.run()
    bot = Identity.generate()
    network.post(b.daemon_key, b.add_seat(bot, "b-bot1", "basic"))
    network.run()
    (ready,) = network.ready[a.daemon_key]
    assert {m.key: m.bot for m in ready.members}[bot.public_key] == "basic"


@pytest.mark.parametrize("seat", ["a person of ours", "a bot of ours"])
def test_a_manifest_that_changes_what_our_seat_is_is_not_signed(
    seat: str, caplog: pytest.LogCaptureFixture
) -> None:
    joined = Joined()
    ours = joined.seated[1]
    if seat == "a bot of ours":
        joined.me.bot_levels[ours.key] = "basic"
        forged = Member(ours.key, ours.name, ours.daemon, ours.endpoint)  # said to be a person
    else:
        forged = Member(ours.key, ours.name, ours.daemon, ours.endpoint, "basic")
    with caplog.at_level(logging.WARNING):
        out = joined.manifest([joined.seated[0].to_wire(), forged.to_wire(), joined.member()])
    assert out == [] and "a person of ours a bot, or a bot of ours a person" in caplog.text
    assert joined.offer.state is OfferState.OPEN and joined.me._signatures == {}


@pytest.mark.parametrize("lang", ["fr", "en"])
@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
def test_every_members_screen_tags_the_bots_the_manifest_names(
    lang: str, size: tuple[int, int]
) -> None:
    """This client's daemon hosts none of them: the tag comes from the daemon's ``state``."""
    ui = app(lang, *size)
    state = next_round()
    bots = ["", "", "strong", "", "basic"]
    ui.model.update({**state, "bots": bots})
    screen = ui.screen_text()
    for seat, level in enumerate(bots):
        tag = f"({ui.texts('bot_level', level=level)})"
        label = f"[{str(state['fingerprints'][seat]).split('-')[0]}]"  # the seat's, by its key
        line = next(line for line in screen.splitlines() if label in line)
        assert (f"{label} {tag}" in line) == bool(level), (label, line, screen)


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_the_lobby_tags_the_bots_of_a_table_filling_elsewhere(lang: str) -> None:
    """A table another daemon opened with its bots: the lobby lists them as bots too."""
    ui = app(lang, 120, 40)
    ui.model.update({"table": None})
    ui.model.tables = [
        {
            "table": "ab" * 16,
            "name": "club",
            "seats": 4,
            "members": ["alice", "alice-bot1", "bruno"],
            "bots": ["", "strong", ""],
            "state": "open",
            "silence": "nothing",
            "invite": None,
            "verified": True,
            "refused": None,
        }
    ]
    screen = ui.screen_text()
    tag = ui.texts("bot_level", level="strong")
    assert f"alice, alice-bot1 ({tag}), bruno" in screen, screen
