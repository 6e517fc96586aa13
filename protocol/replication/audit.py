"""The end-of-deal audit: replay a whole deal from its signed messages and revealed seeds.

Every daemon runs it on its own transcript before signing the score, and ``tarot audit``
runs it on a saved transcript: the same function, so the verdict is the same everywhere.

1. The public course (:class:`~protocol.replication.public.PublicDeal`) is replayed: every message's
   checks again, and whatever stopped the deal.
2. The deck is replayed from the seeds (:func:`~protocol.deck.audit_deck.audit_deck`): it names a
   seat that deviated in a way the live checks could only notice (a non-card point), and it
   gives the true hands, chien and écart.
3. The game is replayed on the referee with every hand visible: each bid, call, écart,
   poignée and card is checked against the full hands — a renonce shows here.
4. The score, and who takes a 100-point penalty row (one at most per seat and deal):

   * **Every card played**: the deal is scored, whatever happens after its last card.  A seat
     that keeps its seed does not stop that: every hand is open by then, and the deal is
     scored from the open record (:func:`~protocol.deck.audit_deck.open_deck`) — the seeds would
     only have checked again what the live checks proved.  The seat that kept its seed, and
     any seat that deviated after the last card (a bad reveal, an equivocation, a score it
     should not have signed), takes the penalty: neither withholding nor a visible deviation
     erases a loss.
   * **A renonce** follows the FFT arbitration code for free play: if the offending camp wins,
     the deal is annulled; if it loses, it counts as played; the offender takes the penalty.
     A rule broken before the play (a false call, poignée or écart, a petit sec kept quiet)
     annuls the deal, with the same penalty.
   * **A deal stopped before its last card** scores nothing and is recorded as abandoned.  A
     proven deviation costs its culprit the penalty; a seat that stopped answering before the
     reveal pays what the table's rule says (:class:`~protocol.replication.manifest.SilenceCost`: by
     default the penalty once it could read its hand, nothing before — a cable cut is no
     crime, a free redeal of a hand seen is one), and a seat that then keeps its seed pays
     only under the rule ``penalty`` — its reveal is timed out on each daemon's own clock,
     which is no proof against it.

   The deal's verdict is the first proven deviation, else the first silence
   (:class:`~protocol.replication.verdict.Fault`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from protocol.deck.audit_deck import audit_deck, open_deck
from protocol.replication.manifest import ManifestError, SignedManifest
from protocol.replication.messages import Kind, Message, WireValue
from protocol.replication.public import (
    PublicDeal,
    Stage,
    TableSetup,
    action_of,
    silence_verdict,
    unused_kind,
)
from protocol.replication.transcript import Transcript, equivocations, impersonation, signer_of
from protocol.replication.verdict import Verdict
from protocol.rules.cards import Card
from protocol.rules.deal import Deal, Phase, Play
from protocol.rules.rules import RuleError, has_petit_sec
from protocol.rules.scoring import Camp, DealOutcome, ScoreSheet, score_deal, score_row


@dataclass(frozen=True)
class DealAudit:
    verdict: Verdict | None  #: the first proven deviation, else the first silence
    scores: tuple[int, ...]  #: the deal's row (zeros when void, abandoned or annulled)
    referee: Deal | None  #: the deal replayed with every hand visible (None if the deck failed)
    outcome: DealOutcome | None
    abandoned: bool  #: nothing scored: stopped before its last card, or its deck does not replay
    #: The seats that take a 100-point penalty row, one each, in seat order, with the verdict
    #: that costs it them.
    penalties: tuple[Verdict, ...] = ()
    #: The seats the others timed out (they stopped answering, on the others' word alone).
    silent: tuple[int, ...] = ()

    @property
    def ok(self) -> bool:
        return self.verdict is None

    def reporters(self, players: int) -> tuple[int, ...]:
        """The seats on whose word alone a silence rests: every seat that answered.  A
        silence is their report, never a proof against the silent seat."""
        silent = {
            *self.silent,
            *([self.verdict.seat] if self.verdict and self.verdict.seat is not None else []),
        }
        return tuple(seat for seat in range(players) if seat not in silent)

    @property
    def penalised(self) -> tuple[int, ...]:
        """The seats that take a penalty row, in seat order."""
        return tuple(verdict.seat for verdict in self.penalties if verdict.seat is not None)

    def charge(self, sheet: ScoreSheet) -> None:
        """Add the deal's penalty rows to ``sheet``, each labelled with the rule that costs it."""
        for verdict in self.penalties:
            assert verdict.seat is not None  # only attributed verdicts cost a penalty
            sheet.add_penalty(verdict.seat, reason=verdict.reason)

    @property
    def void(self) -> bool:
        return self.referee is not None and self.referee.phase is Phase.VOID


def dealer_of(messages: Sequence[Message]) -> int:
    """The dealer every seat committed to, from the first commitment of a chain."""
    for message in messages:
        payload = message.payload
        if message.kind is Kind.COMMIT and isinstance(payload, dict):
            dealer = payload.get("dealer")
            if isinstance(dealer, int) and not isinstance(dealer, bool):
                return dealer
    raise ValueError("the transcript holds no commitment naming the dealer")


def audit_deal(
    table: TableSetup,
    deal_number: int,
    dealer: int,
    messages: Sequence[Message],
    evidence: Sequence[Message] = (),
    *,
    settle_by_seeds: bool = True,
) -> DealAudit:
    """Audit the chain of one deal (the messages in transcript order), signed scores included,
    with the signed messages kept outside the chain (``Transcript.evidence``): those can
    prove a deviation by themselves, which stopped the deal as it did at every seat.

    **What the seeds settle is not proved again** (``settle_by_seeds``).  Once every seat has
    revealed its seed, the replay (:func:`~protocol.deck.audit_deck.audit_deck`) recomputes each
    shuffle and lock from the step published before it and compares every point: a step
    that replays exactly is the honest step, whatever its proof says, and verifying that
    proof again — 84 % of the audit's time — could add nothing.  So the chain is first
    followed without checking those proofs; if that audit is clean (every seed matches its
    commitment, every step replays exactly, nothing else found), it is the audit.  Anything
    else — a seed missing (nothing is replayed then), a step that differs, any verdict —
    and the deal is audited again with every proof verified, so that a deviation is named
    as the live checks named it.  The only deal whose verdict the skip can change is one
    whose every step replays exactly but whose proof is garbage: no honest seat let it pass,
    and its deck is the honest one."""
    if settle_by_seeds and _every_seed_revealed(table, messages):
        audit = _audit_deal(table, deal_number, dealer, messages, evidence, proofs=False)
        if audit.ok and not audit.abandoned:
            return audit
    return _audit_deal(table, deal_number, dealer, messages, evidence, proofs=True)


def _every_seed_revealed(table: TableSetup, messages: Sequence[Message]) -> bool:
    """Whether every seat's reveal is in the chain (whether its seed is good is the
    replay's to say)."""
    return len({m.seat for m in messages if m.kind is Kind.REVEAL}) == table.players


def _audit_deal(
    table: TableSetup,
    deal_number: int,
    dealer: int,
    messages: Sequence[Message],
    evidence: Sequence[Message],
    proofs: bool,
) -> DealAudit:
    """:func:`audit_deal`'s one pass; ``proofs``: whether the shuffle and lock proofs are
    verified (else every seat's steps are taken as published, for the replay to settle)."""
    public = PublicDeal(table, deal_number, dealer)
    if not proofs:
        public.deck.trusted = frozenset(range(table.players))
    for message in messages:
        public.apply(message)
    offence = signed_offence(table.members, [*messages, *evidence])
    if public.verdict is None and offence is not None:
        public.verdict = offence
    audit = audit_public(public)
    wrong = wrong_signature(public, audit)
    return audit if wrong is None else convicted(audit, wrong)


def table_of(transcript: Transcript, manifest: SignedManifest | None = None) -> TableSetup:
    """The table a transcript was played at.  From the manifest its members signed (a proof
    file carries it), once every signature checks and it names the transcript's table, keys and
    names — :class:`~protocol.replication.manifest.ManifestError` saying what differs: a
    transcript's names are labels nobody signed.  Without one (a transcript file), the transcript's
    labels and the default rules."""
    if manifest is None:
        return TableSetup(transcript.table_id, transcript.members, transcript.names)
    signed = TableSetup.from_manifest(manifest.verified())
    if signed.table_id != transcript.table_id:
        raise ManifestError(
            f"the manifest is of table {signed.table_id.hex()}, the transcript of table "
            f"{transcript.table_id.hex()}"
        )
    if len(signed.members) != len(transcript.members):
        raise ManifestError(
            f"the manifest seats {len(signed.members)} members, the transcript "
            f"{len(transcript.members)}"
        )
    for seat, (key, name, label) in enumerate(zip(signed.members, signed.names, transcript.names)):
        if key != transcript.members[seat]:
            raise ManifestError(
                f"seat {seat}'s key in the transcript is not the one in the manifest its members "
                "signed"
            )
        if label != name:
            raise ManifestError(
                f"the transcript names seat {seat} {label!r}, but its members signed {name!r} for "
                "that seat"
            )
    return signed


def audit_transcript(
    transcript: Transcript, manifest: SignedManifest | None = None
) -> tuple[TableSetup, int, DealAudit]:
    """Audit a saved transcript (read with ``Transcript.from_bytes``), its evidence included,
    at the table :func:`table_of` gives: the table, the dealer every seat committed to, and
    the audit."""
    table = table_of(transcript, manifest)
    dealer = dealer_of(transcript.messages)
    return (
        table,
        dealer,
        audit_deal(table, transcript.deal, dealer, transcript.messages, transcript.evidence),
    )


def signed_offence(members: Sequence[bytes], messages: Iterable[Message]) -> Verdict | None:
    """A deviation that signed messages prove by themselves, whenever they arrived: two
    messages for one slot (equivocation), a message signed for another member's seat
    (impersonation), a message of a kind the deal never uses.  A seat stops the deal on the
    first it receives (:class:`~protocol.replication.machine.SeatMachine`); with several, the audit
    names the first by seat, step and reason, which is the same everywhere."""
    found: list[Verdict] = []
    authentic: list[Message] = []
    for message in messages:
        signer = signer_of(message, members)
        if signer is None:
            continue  # proves nothing against anybody
        if signer != message.seat:
            found.append(impersonation(message, signer))
            continue
        authentic.append(message)
        unused = unused_kind(message)
        if unused is not None:
            found.append(unused)
    found += equivocations(authentic)
    return min(found, key=lambda v: (v.seat or 0, v.step, v.reason, v.evidence), default=None)


def signed_score(audit: DealAudit) -> dict[str, WireValue]:
    """What every seat signs at the end: the scores and the verdict of the audit."""
    verdict = audit.verdict
    return {
        "scores": list(audit.scores),
        "culprit": None if verdict is None else verdict.seat,
        "rule": None if verdict is None else verdict.reason,
    }


def wrong_signature(public: PublicDeal, audit: DealAudit) -> Verdict | None:
    """A seat that signed a score the audit does not give is named."""
    expected = signed_score(audit)
    for seat, signed in sorted(public.signatures.items()):
        if signed != expected:
            return Verdict(seat, "score", "signed a score that the audit does not give", ())
    return None


def audit_public(public: PublicDeal, trusted: frozenset[int] = frozenset()) -> DealAudit:
    """Audit a deal whose chain ``public`` has already followed (a seat's own replica).

    ``trusted``: the seats whose shuffle and lock steps the caller computed itself (a daemon's
    own seats), taken as published rather than replayed — see
    :func:`~protocol.deck.audit_deck.audit_deck`.  A deviation in those steps is not found."""
    table, dealer = public.table, public.dealer
    if public.played_out and len(public.seeds) < table.players:
        deck = open_deck(public.deck.record, public.deck.chien())
    else:
        revealed = {seat: public.seeds.get(seat) for seat in range(table.players)}
        deck = audit_deck(public.deck.record, revealed, trusted)
    verdict = _first_verdict(public, deck.verdict)
    zeros = tuple(0 for _ in range(table.players))
    if deck.verdict is not None or len(deck.hands) != table.players:
        return _settled(public, DealAudit(verdict, zeros, None, None, abandoned=True))
    referee = Deal(
        table.variant, dealer, tuple(deck.hands[s] for s in range(table.players)), deck.chien
    )
    false_reports = _bad_hand_reporters(public)
    if verdict is None or not verdict.attributed:
        if false_reports:
            reason = "reported a hand that does not decrypt, but every step replays exactly"
            verdict = Verdict(false_reports[0], "deal", reason, ())
    if not public.played_out and (public.stopped or verdict is not None):
        return _settled(public, DealAudit(verdict, zeros, referee, None, abandoned=True))
    return _settled(public, _replay_game(table, public, referee, deck.ecart), verdict)


_AuditKey = tuple[bytes, TableSetup, Verdict | None, frozenset[int]]


class Audits:
    """The latest audits, by transcript head, table, live verdict and trusted seats, for the
    seats that share a process and a deal — the simulator's five, a daemon's bots — so that
    the deck is replayed once a deal, not once a seat (four replays of five saved).

    The audit is a pure function of the chain, of the table's rules (two tables may share a
    chain's heads: the genesis binds the id and the keys, not the rules), of the signed proof
    that stopped the deal outside it, if any (an equivocation), and of the seats whose deck
    steps it took as published: an audit that trusted one seat's steps is no audit for a
    caller that trusts another's.  The owner of the machines makes one and hands it to each
    (:attr:`~protocol.replication.machine.SeatMachine.audits`)."""

    SIZE = 16  #: audits kept, the oldest dropped first

    def __init__(self) -> None:
        self._by_key: dict[_AuditKey, DealAudit] = {}

    def of(
        self, public: PublicDeal, head: bytes, trusted: frozenset[int] = frozenset()
    ) -> DealAudit:
        """:func:`audit_public` of ``public``, whose transcript ends at ``head``."""
        key = (head, public.table, public.verdict, trusted)
        found = self._by_key.get(key)
        if found is None:
            found = audit_public(public, trusted)
            if len(self._by_key) >= self.SIZE:
                del self._by_key[next(iter(self._by_key))]
            self._by_key[key] = found
        return found


def convicted(audit: DealAudit, offence: Verdict) -> DealAudit:
    """``audit`` with one more proven deviation, found after it (a score signed that it does
    not give): its culprit takes the penalty row, and it is the deal's verdict unless a proven
    one is there already."""
    verdict = audit.verdict if audit.verdict is not None and audit.verdict.proven else offence
    return replace(audit, verdict=verdict, penalties=_one_each([*audit.penalties, offence]))


def _settled(public: PublicDeal, audit: DealAudit, after: Verdict | None = None) -> DealAudit:
    """``audit`` with its penalty rows and the deal's verdict, from what the replay found, what
    was found ``after`` the last card (a deviation at the reveal, say) and who was timed out:
    at the reveal, a seat that kept its seed; before it, one that stopped answering, whose
    silence costs what the table's rule says."""
    found = [v for v in (audit.verdict, after) if v is not None]
    costly = [
        silence_verdict(seat, stage)
        for seat, stage in sorted(public.stalled_at.items())
        if _costs(public, seat, stage)
    ]
    verdicts = [*found, *costly]
    verdict = next((v for v in verdicts if v.proven), verdicts[0] if verdicts else None)
    return replace(
        audit,
        verdict=verdict,
        penalties=_one_each([*(v for v in found if v.proven), *costly]),
        silent=public.stalled,
    )


def _costs(public: PublicDeal, seat: int, stage: Stage) -> bool:
    """Whether ``seat``, timed out at ``stage``, takes the penalty row: at the reveal of a deal
    whose every card was played (it kept its seed, and the deal is scored without it), never
    once it revealed, and otherwise as the table's rule says — under the default, whether it
    could read its hand then (:attr:`~protocol.replication.public.PublicDeal.could_read`).

    A deal stopped before its last card — passed out, or abandoned by a seat that stopped
    answering — costs nothing at its reveal by default: each daemon times the reveal out on
    its own clock, so a member still waiting, at its own pace, for the seat that stopped would
    be timed out with it by a faster one, and an honest seat would pay for a cable."""
    if stage is Stage.REVEAL and public.played_out:
        return True
    return stage is not Stage.SIGN and public.table.silence.costs(seat in public.could_read)


def _one_each(verdicts: Iterable[Verdict]) -> tuple[Verdict, ...]:
    """One penalty per seat and deal, for the first reason found, in seat order."""
    first: dict[int, Verdict] = {}
    for verdict in verdicts:
        if verdict.seat is not None:
            first.setdefault(verdict.seat, verdict)
    return tuple(first[seat] for seat in sorted(first))


def _first_verdict(public: PublicDeal, deck_verdict: Verdict | None) -> Verdict | None:
    """The live verdict, unless it could not name a seat and the seeds now can."""
    live = public.verdict
    if live is None or not live.attributed:
        return deck_verdict or live
    return live


def _bad_hand_reporters(public: PublicDeal) -> list[int]:
    return [seat for seat in sorted(public.hand_reports) if public.hand_status(seat) == "bad-hand"]


def _replay_game(
    table: TableSetup, public: PublicDeal, referee: Deal, ecart: tuple[Card, ...] | None
) -> DealAudit:
    zeros = tuple(0 for _ in range(table.players))
    declared_void = public.game is not None and public.game.phase is Phase.VOID
    if referee.phase is Phase.VOID:
        if declared_void:
            return DealAudit(None, zeros, referee, None, abandoned=False)
        holder = next(s for s, h in enumerate(referee.dealt) if h is not None and has_petit_sec(h))
        verdict = Verdict(holder, "petit_sec", "held the petit sec and did not show it", ())
        return DealAudit(verdict, zeros, referee, None, abandoned=False)
    renonce: Verdict | None = None
    for message in public.game_messages:
        action = action_of(message, ecart or ())
        evidence = (message.digest.hex(),)
        try:
            referee.push(action)
            continue
        except RuleError as error:
            offence = Verdict(message.seat, message.kind.value, str(error), evidence)
        if isinstance(action, Play):
            renonce = renonce or Verdict(
                message.seat, "play", f"renonce: {offence.reason}", evidence
            )
            try:
                referee.push(action, strict=False)
                continue
            except RuleError:
                pass
        # Broken before the play (a false call, poignée or écart), or a card the player never
        # held: the deal cannot be scored as played.  Annulled (the offender's penalty follows).
        return DealAudit(offence, zeros, referee, None, abandoned=False)
    outcome = referee.outcome()
    if outcome is None or referee.taker is None:  # pragma: no cover - a finished replay is scored
        return DealAudit(renonce, zeros, referee, None, abandoned=False)
    score = score_deal(outcome)
    row = tuple(score_row(score, table.players, referee.taker, referee.partner))
    if renonce is None or renonce.seat is None:
        return DealAudit(None, row, referee, outcome, abandoned=False)
    offender_won = (referee.camp(renonce.seat) is Camp.ATTACK) == score.won
    return DealAudit(renonce, zeros if offender_won else row, referee, outcome, abandoned=False)
