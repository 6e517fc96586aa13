"""Leaving after seeing one's cards costs the leaver (issue 35, item 3).

The deal-keys and chien-keys rounds have no order: the last seat to send holds every other
seat's keys and reads its hand (as taker, the chien) before it sends its own.  Under the rule
of before (``nothing``), going silent then was a free redeal.  Under the default rule
(``after-seeing``) a seat timed out when it could read its hand takes the penalty row; one cut
off before it could (at the shuffle, at the lock, or at the deal keys with another seat's keys
missing too) pays nothing.  Four honest seats in one process (``test_deal_tamper.Table``), one
or two of them cut off at a chosen moment; each honest seat's audit, and the audit of its
transcript under the manifest every member signed, charge the same seats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgpack
import pytest
from prompt_toolkit.formatted_text import fragment_list_to_text
from test_audit_penalties import finish_without
from test_deal_tamper import Table
from test_tui_screens import model, state

from client.simulation import Cheat, play_one_deal, sim_manifest, sim_table
from client.tui.lobby import lobby_fragments
from protocol.replication.audit import audit_transcript
from protocol.replication.identity import Identity
from protocol.replication.manifest import (
    MANIFEST_DOMAIN,
    SignedManifest,
    SilenceCost,
    sign_manifest,
)
from protocol.replication.messages import Kind
from protocol.replication.public import Stage
from protocol.replication.transcript import Transcript

#: The seat cut off, and the other one when two are.
CUT, ALSO = 2, 1


def _before_sending(*kinds: Kind) -> Callable[[Table], None]:
    """Run until each cut seat has its ``kinds`` message ready, then drop them: the cable is
    cut just before they leave."""

    def cut(table: Table) -> None:
        seats = (CUT, ALSO)[: len(kinds)]

        def ready() -> bool:
            queued = {(m.seat, m.kind) for m in table.queue}
            return all(sent in queued for sent in zip(seats, kinds))

        table.run_until(ready)
        table.queue = [m for m in table.queue if m.seat not in seats]

    return cut


def _at_its_bid(table: Table) -> None:
    """Run until the cut seat owes its bid: it has read its hand, and bids nothing."""
    table.run_until(lambda: table.machines[CUT].decision() is not None and not table.queue)
    assert table.machines[0].public.stage is Stage.BIDDING


#: When the cable is cut: the seats cut off, and those that could read their hand then.
MOMENTS: dict[str, tuple[Callable[[Table], None], tuple[int, ...], tuple[int, ...]]] = {
    "before its shuffle": (_before_sending(Kind.SHUFFLE), (CUT,), ()),
    "before its lock": (_before_sending(Kind.LOCK), (CUT,), ()),
    "before its deal keys, the others' out": (_before_sending(Kind.DEAL_KEYS), (CUT,), (CUT,)),
    "two before their deal keys": (
        _before_sending(Kind.DEAL_KEYS, Kind.DEAL_KEYS),
        (ALSO, CUT),
        (),
    ),
    "before its hand check": (_before_sending(Kind.PETIT_SEC), (CUT,), (CUT,)),
    "at its bid": (_at_its_bid, (CUT,), (CUT,)),
}


@pytest.mark.parametrize("rule", list(SilenceCost))
@pytest.mark.parametrize("moment", list(MOMENTS))
def test_a_seat_cut_off_pays_what_the_rule_says_of_what_it_could_see(
    moment: str, rule: SilenceCost
) -> None:
    cut_at, cut, saw = MOMENTS[moment]
    table = Table(silence=rule)
    cut_at(table)
    honest = finish_without(table, *cut)
    expected = {
        SilenceCost.NOTHING: (),
        SilenceCost.AFTER_SEEING: saw,
        SilenceCost.PENALTY: cut,
    }[rule]
    manifest = sign_manifest(
        table.table.table_id, "club", list(zip(table.identities, table.table.names)), rule
    )
    for machine in honest:
        audit = machine.audit
        assert audit is not None and audit.abandoned and set(audit.scores) == {0}
        assert machine.public.stalled == cut and audit.silent == cut
        assert audit.verdict is not None and not audit.verdict.proven
        assert audit.penalised == expected, (moment, rule)
        _, _, offline = audit_transcript(
            Transcript.from_bytes(machine.transcript.to_bytes()), manifest
        )
        assert offline.penalised == expected


def _unruled(manifest: SignedManifest, identities: Sequence[Identity]) -> SignedManifest:
    """The same table's manifest in the shape signed before tables had rules: three fields."""
    fields = msgpack.unpackb(manifest.document)
    document: bytes = msgpack.packb(fields[:3])
    return SignedManifest(document, tuple(i.sign(MANIFEST_DOMAIN + document) for i in identities))


def test_a_deal_signed_before_the_rule_reads_as_it_was_signed() -> None:
    """``tarot sim --players 5 --cheat 1:withhold-keys --seed 21``: the seat that read its hand
    and withheld its keys is charged under the new default; the same transcript under a
    manifest of before — no rule, or ``nothing`` — charges nobody."""
    table, identities = sim_table(5, 21)
    assert table.silence is SilenceCost.AFTER_SEEING  # a new table
    machines = play_one_deal(table, identities, 0, 1, 21, ["basic"], Cheat(1, "withhold-keys"))
    witness = machines[0]
    assert witness.audit is not None and witness.audit.penalised == (1,)
    assert witness.public.stalled_at == {1: Stage.DEAL_KEYS}
    transcript = Transcript.from_bytes(witness.transcript.to_bytes())
    signed = sim_manifest(machines)
    assert audit_transcript(transcript, signed)[2].penalised == (1,)
    older = _unruled(signed, identities)
    table_of_old, _, audit = audit_transcript(transcript, older)
    assert table_of_old.silence is SilenceCost.NOTHING and audit.penalised == ()
    assert audit.verdict == witness.audit.verdict  # the same silence, only the cost differs
    nothing = sign_manifest(
        table.table_id, "tarot sim", list(zip(identities, table.names)), SilenceCost.NOTHING
    )
    assert audit_transcript(transcript, nothing)[2].penalised == ()


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_the_lobby_says_each_tables_rule_for_silence(lang: str) -> None:
    """The rule is every member's to sign: the lobby says it beside each table, the new
    default as much as the others."""
    said = {
        ("fr", "after-seeing"): "un joueur muet après avoir vu ses cartes paie la pénalité",
        ("fr", "nothing"): "un joueur muet avant la révélation ne paie rien",
        ("fr", "penalty"): "un joueur muet avant la révélation paie la pénalité de 100 points",
        ("en", "after-seeing"): "a player silent after seeing their cards takes the 100-point",
        ("en", "nothing"): "a player silent before the reveal pays nothing",
        ("en", "penalty"): "a player silent before the reveal takes the 100-point penalty",
    }
    m = model(lang, {**state(), "table": None})
    m.tables = [
        {
            "table": f"{n:02x}" * 16,
            "name": rule.value,
            "seats": 3,
            "members": ["bob"],
            "state": "open",
            "silence": rule.value,
        }
        for n, rule in enumerate(SilenceCost)
    ]
    lines = fragment_list_to_text(lobby_fragments(m)).splitlines()
    for rule in SilenceCost:
        line = next(line for line in lines if f" {rule.value} " in line)
        assert said[lang, rule.value] in line, line
