"""The lobby: the tables seen on the LAN, the seats filling, and who we are."""

from __future__ import annotations

from typing import Any

from prompt_toolkit.formatted_text import StyleAndTextTuples

from client.tui.model import Model


def our_table(model: Model) -> dict[str, Any] | None:
    """The table we opened or joined while it fills (our name is among its members)."""
    name = (model.status or {}).get("name")
    return next((t for t in model.tables if name in t.get("members", ())), None)


def lobby_fragments(model: Model) -> StyleAndTextTuples:
    texts, status = model.texts, model.status or {}
    out: StyleAndTextTuples = [("class:heading", texts("lobby")), ("", "\n\n")]
    ours = our_table(model)
    if not model.tables:
        out += [("class:dim", texts("lobby_none")), ("", "\n")]
    for i, table in enumerate(model.tables):
        state = table.get("state", "")
        line = texts(
            "lobby_table",
            name=str(table.get("name") or table["table"][:8]).ljust(16),
            count=len(table.get("members", ())),
            seats=table.get("seats"),
            state=texts(f"lobby_state_{state}") if f"lobby_state_{state}" in texts.keys() else state,
            members=", ".join(table.get("members", ())),
        )
        style = "class:option.cursor" if i == model.lobby_index else "class:option"
        out += [("", "  "), (style, line)]
        if table is ours:
            out.append(("class:heading", texts("lobby_ours")))
            if table.get("invite"):  # what the players whose daemon does not know ours type
                out.append(("class:heading", texts("lobby_invite", code=table["invite"])))
        out.append(("", "\n"))
    if model.invite is not None and model.tables:
        name = model.tables[model.lobby_index].get("name", "")
        out += [("", "\n"), ("class:prompt", texts("invite_prompt", table=name, code=model.invite)), ("", "\n")]
    peers = status.get("peers", ())
    out.append(("", "\n"))
    if peers:
        listed = ", ".join(f"{p['name']} [{p['fingerprint'].split('-')[0]}] {p['state']}" for p in peers)
        out.append(("class:dim", texts("lobby_peers", peers=listed)))
    else:
        out.append(("class:dim", texts("lobby_no_peers")))
    out.append(("", "\n"))
    return out
