"""The signed manifest (issue 26, items 7 and 8): the table's rule for silence is signed with
the rest by every member, and a proof file carries the manifest, so that renaming the accused
in the file makes the proof not hold."""

from __future__ import annotations

import logging
from pathlib import Path

import msgpack
import pytest
from test_lobby import Joined, Network

from client.cli import main as tarot
from protocol.replication.identity import Identity
from protocol.replication.manifest import (
    Manifest,
    ManifestError,
    SignedManifest,
    SilenceCost,
    sign_manifest,
)
from protocol.replication.transcript import Transcript, proof_file, read_proof_file
from tarotd.lobby import OfferState, ReadyTable

pytestmark = pytest.mark.heavy

SEATS = [
    (Identity.from_private_bytes(bytes([k + 1]) * 32), name)
    for k, name in enumerate(["Anne", "Basile", "Chloé"])
]
TABLE = bytes(range(16))


@pytest.mark.parametrize("rule", list(SilenceCost))
def test_the_openers_rule_for_silence_is_signed_by_every_member_and_kept(rule: SilenceCost) -> None:
    """Every member started under the rule (``tarotd --silence``): a daemon joins only a
    table under its own (tests/test_lobby.py)."""
    network = Network([1, 1, 1], seed=6)
    opener, *others = network.lobbies.values()
    for lobby in network.lobbies.values():
        lobby.silence = rule
    network.post(opener.daemon_key, opener.open("club", 3))
    network.run()
    (table,) = others[0].offers
    for lobby in others:
        network.post(lobby.daemon_key, lobby.join(table))
    network.run()
    ready = [r for rs in network.ready.values() for r in rs]
    assert len(ready) == 3 and {r.setup.silence for r in ready} == {rule}
    for table_ready in ready:  # as a restarted daemon reads it back from its store
        assert ReadyTable.from_bytes(table_ready.to_bytes()).setup == table_ready.setup
        assert (
            SignedManifest(table_ready.manifest, table_ready.signatures).verified().silence is rule
        )


def test_a_manifest_with_an_unknown_rule_changes_nothing(caplog: pytest.LogCaptureFixture) -> None:
    joined = Joined()
    members = [*(m.to_wire() for m in joined.seated), joined.member()]
    frame = {"t": "manifest", "table": joined.table, "members": members, "silence": "a week's ban"}
    with caplog.at_level(logging.WARNING):
        assert joined.me.receive(joined.opener.daemon_key, frame) == []
    assert "silence is one of after-seeing, nothing, penalty" in caplog.text
    assert joined.offer.state is OfferState.OPEN and joined.me._signatures == {}


def test_a_manifest_reads_back_only_as_every_member_signed_it() -> None:
    signed = sign_manifest(TABLE, "club", SEATS, SilenceCost.PENALTY)
    manifest = signed.verified()
    assert (manifest.names, manifest.silence) == (("Anne", "Basile", "Chloé"), SilenceCost.PENALTY)
    renamed = signed.document.replace(b"Basile", b"Bastin")
    # any change breaks them all
    with pytest.raises(ManifestError, match=r"signature by seat 0 \(Anne\) does not check"):
        SignedManifest(renamed, signed.signatures).verified()
    with pytest.raises(ManifestError, match="2 signatures for a manifest of 3 members"):
        SignedManifest(signed.document, signed.signatures[:2]).verified()
    fields = msgpack.unpackb(signed.document)
    older = Manifest.from_bytes(msgpack.packb(fields[:3]))  # signed before tables had rules
    assert older.silence is SilenceCost.NOTHING and older.names == manifest.names
    # A new table's rule, unless its opener chose another: leaving after seeing costs.
    assert sign_manifest(TABLE, "club", SEATS).verified().silence is SilenceCost.AFTER_SEEING
    for rules in ({"silence": "sometimes"}, {"silence": "nothing", "ban": 1}, ["nothing"]):
        with pytest.raises(ManifestError):
            Manifest.from_bytes(msgpack.packb([*fields[:3], rules]))


def _renamed(transcript: Transcript, seat: int, name: str) -> Transcript:
    names = list(transcript.names)
    names[seat] = name
    fields = msgpack.unpackb(transcript.to_bytes())
    fields[3] = [[key, label] for key, label in zip(transcript.members, names)]
    return Transcript.from_bytes(msgpack.packb(fields))


def test_renaming_the_accused_in_a_proof_file_makes_it_not_hold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    proofs = tmp_path / "proofs"
    assert (
        tarot(
            [
                "sim",
                "--players",
                "3",
                "--seed",
                "4",
                "--cheat",
                "1:bad-key",
                "--proofs",
                str(proofs),
            ]
        )
        == 0
    )
    capsys.readouterr()
    original = sorted(proofs.iterdir())[0]
    assert tarot(["audit", str(original)]) == 1
    out = capsys.readouterr().out
    assert (
        "CHEAT — seat 1 (bot-1 [" in out and "names and rules: as every member signed them" in out
    )
    assert "proof: holds" in out
    stated, transcript, manifest = read_proof_file(original.read_bytes())
    renamed = tmp_path / "renamed.tarot-proof"
    renamed.write_bytes(proof_file(_renamed(transcript, 1, "bot-0"), stated, manifest))
    assert tarot(["audit", str(renamed)]) == 2
    out = capsys.readouterr().out
    assert (
        "proof: DOES NOT HOLD — the transcript names seat 1 'bot-0', but its members signed "
        "'bot-1' for that seat" in out
    )
    # Nor can the manifest's name be changed with it: its signatures then fail.
    fields = msgpack.unpackb(manifest.document)
    fields[2][1][1] = "bot-0"
    forged = SignedManifest(msgpack.packb(fields), manifest.signatures)
    renamed.write_bytes(proof_file(_renamed(transcript, 1, "bot-0"), stated, forged))
    assert tarot(["audit", str(renamed)]) == 2
    assert (
        "proof: DOES NOT HOLD — the manifest's signature by seat 0 (bot-0) does not check"
        in capsys.readouterr().out
    )


def test_a_manifest_is_read_through_the_gate_under_its_size_limit() -> None:
    """A member's entry may carry more than its key and name (the host), but not megabytes of
    it, nor a value no field can be (a float): refused by :mod:`protocol.wire` before reading."""
    fields = msgpack.unpackb(sign_manifest(TABLE, "club", SEATS).document)
    assert Manifest.from_bytes(msgpack.packb(fields)).names == ("Anne", "Basile", "Chloé")
    bulky = [*fields[0:2], [[*fields[2][0], b"x" * 70_000], *fields[2][1:]], *fields[3:]]
    with pytest.raises(ManifestError, match="the manifest of 70.* bytes is over the limit"):
        Manifest.from_bytes(msgpack.packb(bulky))
    floating = [*fields[0:2], [[*fields[2][0], 0.5], *fields[2][1:]], *fields[3:]]
    with pytest.raises(ManifestError, match="holds a float"):
        Manifest.from_bytes(msgpack.packb(floating))
    nameless = [*fields[0:2], [[fields[2][0][0], True], *fields[2][1:]], *fields[3:]]
    with pytest.raises(ManifestError, match="seat 0's name is a string, got bool True"):
        Manifest.from_bytes(msgpack.packb(nameless))
