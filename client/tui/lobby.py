"""The lobby: the tables seen on the LAN, the seats filling, and who we are."""

from __future__ import annotations

from typing import Any

from prompt_toolkit.formatted_text import StyleAndTextTuples

from client.tui.event import event_fragments, event_line
from client.tui.model import Model


def our_table(model: Model) -> dict[str, Any] | None:
    """The table we opened or joined while it fills (our name is among its members)."""
    name = (model.status or {}).get("name")
    return next((t for t in model.tables if name in t.get("members", ())), None)


def member_label(model: Model, name: str, level: str = "") -> str:
    """A member's name, with its level when it is a bot: as its daemon said (``level``), or
    as this client knows it."""
    level = level or model.bot_levels.get(name, "")
    return f"{name} ({model.texts('bot_level', level=level)})" if level else name


def peer_state(model: Model, state: str) -> str:
    """A neighbour daemon's state (tarotd.mesh.PeerState) in the player's language."""
    key = f"peer_state_{state}"
    return model.texts(key) if key in model.texts.keys() else state


def lobby_fragments(model: Model) -> StyleAndTextTuples:
    texts, status = model.texts, model.status or {}
    out: StyleAndTextTuples = [("class:heading", texts("lobby")), ("", "\n\n")]
    ours = our_table(model)
    if not model.tables:
        out += [("class:dim", texts("lobby_none")), ("", "\n")]
    apart = False  # the offers of daemons we have no trust in come last, under their heading
    for i, table in enumerate(model.tables):
        unverified = table.get("verified") is False
        if unverified and not apart:
            apart = True
            out += [("", "\n"), ("class:dim", texts("lobby_unverified")), ("", "\n")]
        state = table.get("state", "")
        line = texts(
            "lobby_table",
            name=str(table.get("name") or table["table"][:8]).ljust(16),
            count=len(table.get("members", ())),
            seats=table.get("seats"),
            state=texts(f"lobby_state_{state}")
            if f"lobby_state_{state}" in texts.keys()
            else state,
            members=", ".join(
                member_label(model, str(m), level)
                for m, level in zip(
                    table.get("members", ()),
                    table.get("bots") or [""] * len(table.get("members", ())),
                    strict=True,
                )
            ),
        )
        rule = f"lobby_silence_{table.get('silence')}"  # the table's signed rule for silence
        if rule in texts.keys():
            line += texts(rule)
        style = "class:option.cursor" if i == model.lobby_index else "class:option"
        out += [("", "  "), (style, line)]
        if unverified:
            out.append(("class:dim", texts("lobby_unverified_mark")))
        refused = f"lobby_refused_{table.get('refused')}"  # what its opener said of our code
        if refused in texts.keys():
            out.append(("class:heading", texts(refused)))
        if table is ours:
            out.append(("class:heading", texts("lobby_ours")))
            if table.get("invite"):  # what the players whose daemon does not know ours type
                out.append(("class:heading", texts("lobby_invite", code=table["invite"])))
        out.append(("", "\n"))
    if model.events:
        out += [("", "\n"), ("class:heading", texts("lobby_events")), ("", "\n")]
    for i, event in enumerate(model.events, start=len(model.tables)):
        style = "class:option.cursor" if i == model.lobby_index else "class:option"
        out += [("", "  "), (style, event_line(texts, event)), ("", "\n")]
    selected = model.lobby_index - len(model.tables)
    detail = model.lobby_event  # the event under the cursor, if we are in it; else tonight's
    if not (
        detail is not None
        and 0 <= selected < len(model.events)
        and detail.get("event") == model.events[selected].get("event")
    ):
        detail = model.event
    if detail is not None:
        out += [("", "\n"), *event_fragments(model, event=detail)]
    if model.invite is not None and model.tables:
        name = model.tables[model.lobby_index].get("name", "")
        out += [
            ("", "\n"),
            ("class:prompt", texts("invite_prompt", table=name, code=model.invite)),
            ("", "\n"),
        ]
    selected_event = model.events[selected] if 0 <= selected < len(model.events) else None
    if model.event_bots is not None and selected_event is not None:
        out += [
            ("", "\n"),
            (
                "class:prompt",
                texts(
                    "event_bots_prompt",
                    event=selected_event.get("name", ""),
                    count=model.event_bots,
                    level=texts("bot_level", level=model.event_bots_level),
                ),
            ),
            ("", "\n"),
        ]
    peers = status.get("peers", ())
    out.append(("", "\n"))
    if peers:
        listed = ", ".join(
            f"{member_label(model, p['name'])} [{p['fingerprint'].split('-')[0]}] "
            f"{peer_state(model, p['state'])}"
            for p in peers
        )
        out.append(("class:dim", texts("lobby_peers", peers=listed)))
    else:
        out.append(("class:dim", texts("lobby_no_peers")))
    out.append(("", "\n"))
    return out
