"""The event channel's frames (tarotd/event_frames.py): the bytes on the wire are those of the
daemons before the frames were typed, and a hostile frame of any kind — a field missing, of the
wrong type, too long, a bool for an integer, junk — is refused at the one gate, said once, and
changes nothing."""

from __future__ import annotations

import hashlib
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import msgpack
import pytest

from protocol.event.event import Entry, EntryKind
from protocol.replication.identity import Identity
from tarotd import event_organiser
from tarotd.event_desk import EventDesk
from tarotd.event_frames import MAX_ENDPOINTS, MAX_ENTRIES, FrameKind, decode
from tarotd.event_frames import EventOut as Outs
from tarotd.mesh.wire import MAX_FRAME

sys.path.insert(0, str(Path(__file__).parent))
from test_event_desk import Room, opened

pytestmark = pytest.mark.heavy

GOLDEN = json.loads((Path(__file__).parent / "fixtures" / "event-frames.json").read_text())
#: What main sent in :func:`an_evening`, every frame to its destination, hashed (3c2ee67).
EVENING_DIGEST = "19d5d68f8da8f2cbc061eb6f8b8cf7776f2d554ca7fe41a83e2f09a95d7d98d4"

Sent = tuple[bytes, bytes, bytes]  #: sender, destination, the frame's bytes


def an_evening(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Room, list[Sent]]:
    """An event of 8 players and the organiser's own, 2 rounds of 1 deal, every key and id
    fixed: every frame any desk sends, as it sends it."""
    ids = (hashlib.sha256(b"id%d" % n).digest()[:16] for n in range(100))
    monkeypatch.setattr(event_organiser, "os", SimpleNamespace(urandom=lambda n: next(ids)))
    room = Room(tmp_path, 8, seed=3)
    room.identities = [
        Identity.from_private_bytes(hashlib.sha256(b"k%d" % n).digest()) for n in range(9)
    ]
    room.desks = [room.desk(n) for n in range(9)]
    sent: list[Sent] = []
    post = room.post

    def capture(sender: bytes, outs: Outs) -> None:
        sent.extend((sender, destination, frame.to_wire()) for destination, frame in outs)
        post(sender, outs)

    room.post = capture  # type: ignore[method-assign]
    event_id = opened(room, rounds=2, deals=1)
    room.post(room.organiser.key, room.organiser.join(event_id, "organisateur"))
    room.run()
    room.post(room.organiser.key, room.organiser.start(event_id))
    room.run()
    for now in (10.0, 20.0):
        room.play_open_round()
        room.beat(now)
    return room, sent


def test_an_evening_s_frames_are_byte_for_byte_those_of_the_untyped_desk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Old and new daemons interoperate: the same evening puts the same bytes on the wire."""
    _, sent = an_evening(tmp_path, monkeypatch)
    assert len(sent) == 319
    digest = hashlib.sha256(b"".join(s + d + body for s, d, body in sent)).hexdigest()
    assert digest == EVENING_DIGEST


@pytest.mark.parametrize("kind", list(FrameKind))
def test_each_kind_reads_and_writes_back_the_untyped_desk_s_bytes(kind: FrameKind) -> None:
    golden = bytes.fromhex(GOLDEN["frames"][kind.value])
    frame = decode(golden)
    assert frame.KIND is kind
    assert frame.to_wire() == golden


# --- Hostile frames ----------------------------------------------------------------------------


def mutants(genuine: dict[str, Any]) -> Iterator[tuple[str, object]]:
    """Each way a frame can break its kind's rules, named for the test's id."""
    for name, value in genuine.items():
        if name == "t":
            continue
        yield f"{name}-missing", {k: v for k, v in genuine.items() if k != name}
        wrong: object = "1" if type(value) is not str else b"tcp://10.0.0.1:1"
        yield f"{name}-wrong-type", {**genuine, name: wrong}
        yield f"{name}-bool", {**genuine, name: True}
        yield f"{name}-too-long", {**genuine, name: too_long(value)}
        yield f"{name}-junk", {**genuine, name: junk(value)}
    yield "extra-field", {**genuine, "x": 1}
    yield "unknown-kind", {**genuine, "t": "eventful"}
    yield "kind-not-text", {**genuine, "t": 7}
    yield "not-a-map", list(genuine.values())
    yield "not-msgpack", b"\xc1" + msgpack.packb(genuine, use_bin_type=True)
    yield "two-values", msgpack.packb(genuine, use_bin_type=True) * 2


def too_long(value: object) -> object:
    if type(value) is bytes:  # an id one byte over, an entry with a byte after it
        return value + b"\x00"
    if type(value) is str:
        return "tcp://" + "h" * 300 + ":1"
    if type(value) is int:
        return 2**64 - 1
    assert type(value) is list and value
    if type(value[0]) is list:  # the players' endpoints
        return [value[0]] * (MAX_ENDPOINTS + 1)
    return [b""] * (MAX_ENTRIES + 1)


def junk(value: object) -> object:
    if type(value) is bytes:
        return b"\x91\xc1" + value
    if type(value) is str:
        return "not an endpoint"
    if type(value) is int:
        return -1
    return [[b"\x00" * 32, 7], {"deep": [[[[[1]]]]]}]


def registrations_of_no_one(genuine: dict[str, Any]) -> Iterator[tuple[str, object]]:
    """Registration entries, well formed, whose document is no registration (its signature
    is the record's to check): the handler reads the player's key before the record does."""
    documents = {
        "an-integer": 7,
        "empty": [],
        "key-an-integer": [genuine["event"], 5, "usurpateur"],
        "key-short": [genuine["event"], b"\x01" * 8, "usurpateur"],
    }
    for name, document in documents.items():
        packed = msgpack.packb(document, use_bin_type=True)
        entry = Entry(EntryKind.REGISTER, packed, (bytes(64),))
        yield f"document-{name}", {**genuine, "entry": entry.wire}


def hostile_cases() -> Iterator[Any]:
    for kind, golden in GOLDEN["frames"].items():
        genuine = msgpack.unpackb(bytes.fromhex(golden), raw=False)
        cases = [*mutants(genuine)]
        if kind == FrameKind.REGISTER:
            cases += registrations_of_no_one(genuine)
        for name, mutant in cases:
            body = mutant if type(mutant) is bytes else msgpack.packb(mutant, use_bin_type=True)
            yield pytest.param(kind, body, id=f"{kind}-{name}")


@pytest.fixture(scope="module")
def evening(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Room, bytes, int]]:
    """The evening played, and for each kind the sender and the receiver of its golden frame
    (the first of its kind): a hostile frame comes from the daemon that sent the genuine one,
    to the one that took it."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        room, sent = an_evening(tmp_path_factory.mktemp("evening"), monkeypatch)
    took: dict[str, tuple[Room, bytes, int]] = {}
    for sender, destination, body in sent:
        kind = msgpack.unpackb(body, raw=False)["t"]
        receiver = destination or next(d.key for d in room.desks if d.key != sender)
        index = next(n for n, d in enumerate(room.desks) if d.key == receiver)
        took.setdefault(kind, (room, sender, index))  # the first, the golden frame's
    return took


def state(desk: EventDesk) -> object:
    """All that a frame could change: the desk's events, what it heard, and its store."""
    store = desk.book.store
    return (
        {
            e: (
                h.record.to_bytes(),
                h.endpoints,
                {note: frame.to_wire() for note, frame in h.outbox.items()},
                h.signatures,
                h.rows,
                h.withdrawn,
                h.substitutes,
            )
            for e, h in desk.held.items()
        },
        dict(desk.heard),
        {e: (store.event_entries(e), store.event_notes(e)) for e in store.events()},
    )


@pytest.mark.parametrize(("kind", "body"), list(hostile_cases()))
def test_a_hostile_frame_is_refused_said_once_and_changes_nothing(
    kind: str,
    body: bytes,
    evening: dict[str, tuple[Room, bytes, int]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    room, sender, index = evening[kind]
    desk = room.desk(index)  # the receiver's daemon, restarted: it has said nothing yet
    desk.load()
    desk.heard.update(room.desks[index].heard)
    before = state(desk)
    assert len(body) <= MAX_FRAME
    with caplog.at_level(logging.WARNING, logger="tarotd"):
        for _ in range(3):
            assert desk.receive(sender, body) == []
    refusals = [r for r in caplog.records if "refused" in r.getMessage()]
    assert len(refusals) == 1, [r.getMessage() for r in caplog.records]
    assert state(desk) == before
