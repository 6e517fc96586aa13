"""A peer sending malformed lobby frames makes the lobby do nothing but refuse them.

Through a whole formation (tests/formation.py: every kind of frame, each at a lobby in the
state where it counts), every frame delivered is first sent again malformed, in every way of
tests/malformed.py: the lobby answers none, changes nothing of its state, and the formation then
goes on to the very bytes it sends untouched.  Random values never raise out of
:meth:`~tarotd.lobby.Lobby.receive`.
"""

from __future__ import annotations

from collections import Counter

from formation import form
from hypothesis import given
from hypothesis import strategies as st
from malformed import variants

from tarotd.lobby import Lobby


def state(lobby: Lobby) -> str:
    """All that a frame could change at ``lobby`` — but the memory of refusals said in the log."""
    seen = {name: value for name, value in vars(lobby).items() if name != "_refusals"}
    seen["guesses"] = vars(lobby.guesses)
    return repr(seen)


def test_a_malformed_frame_of_any_kind_changes_nothing_at_any_step_of_a_formation() -> None:
    tried: Counter[str] = Counter()
    accepted: list[str] = []

    def send_malformed_first(sender: bytes, target: Lobby, frame: dict[str, object]) -> None:
        before = state(target)
        for what, variant in variants(frame):
            answer = target.receive(sender, variant)
            if answer or state(target) != before:
                accepted.append(f"{frame['t']}, {what}: answered {answer}")
                before = state(target)
            tried[str(frame["t"])] += 1

    untouched = form()
    hostile = form(tap=send_malformed_first)
    assert accepted == []
    assert hostile.sent == untouched.sent and hostile.ready == [1, 1, 1, 0]
    assert set(tried) == {
        "offer",
        "join",
        "leave",
        "manifest",
        "sign",
        "seal",
        "coin",
        "knock",
        "answer",
        "prove",
        "proven",
        "refused",
    }


VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**64), 2**64)
    | st.text(max_size=80)
    | st.binary(max_size=80),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=24,
)
NAMES = ["table", "name", "seats", "opener", "members", "state", "nonce", "silence", "keys"]
NAMES += ["key", "sig", "commit", "seals", "coins", "sid", "share", "tag", "why"]
KINDS = ["offer", "join", "leave", "manifest", "sign", "seal", "coin", "knock", "answer"]
KINDS += ["prove", "proven", "refused"]


@given(
    frame=VALUES
    | st.builds(
        lambda kind, fields: {"t": kind, **fields},
        st.sampled_from(KINDS),
        st.dictionaries(st.sampled_from(NAMES), VALUES),
    )
)
def test_no_value_raises_out_of_the_lobby(frame: object) -> None:
    lobby = Lobby(b"\x01" * 32, "tcp://127.0.0.1:9000", [])
    assert lobby.receive(b"\x02" * 32, frame) == []
