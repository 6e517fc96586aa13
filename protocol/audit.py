"""The end-of-deal audit: replay a whole deal from its signed messages and revealed seeds.

Every daemon runs it on its own transcript before signing the score, and ``tarot audit``
runs it on a saved transcript: the same function, so the verdict is the same everywhere.

1. The public course (:class:`~protocol.public.PublicDeal`) is replayed: every message's
   checks again, and whatever stopped the deal.
2. The deck is replayed from the seeds (:func:`~protocol.audit_deck.audit_deck`): it names a
   seat that deviated in a way the live checks could only notice (a non-card point), and it
   gives the true hands, chien and écart.
3. The game is replayed on the referee with every hand visible: each bid, call, écart,
   poignée and card is checked against the full hands — a renonce shows here.
4. The score.  A deal stopped by a deviation scores nothing and is recorded as abandoned by
   the culprit.  A renonce follows the FFT arbitration code for free play: if the offending
   camp wins, the deal is annulled; if it loses, it counts as played; either way the
   offender takes a 100-point penalty on a row of its own.  A rule broken before the play
   (a false call, poignée or écart, a petit sec kept quiet) annuls the deal, with the same
   penalty.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from protocol.audit_deck import audit_deck
from protocol.cards import Card
from protocol.deal import Deal, Phase, Play
from protocol.messages import Kind, Message
from protocol.messages import Payload as WirePayload
from protocol.public import PublicDeal, TableSetup, action_of, unused_kind
from protocol.rules import RuleError, has_petit_sec
from protocol.scoring import Camp, DealOutcome, score_deal, score_row
from protocol.transcript import Transcript, equivocations, impersonation, signer_of
from protocol.verdict import Verdict


@dataclass(frozen=True)
class DealAudit:
    verdict: Verdict | None  #: the first deviation, attributed to a seat whenever possible
    scores: tuple[int, ...]  #: the deal's row (zeros when void, abandoned or annulled)
    penalty: int | None  #: the seat that takes the renonce penalty row, if any
    referee: Deal | None  #: the deal replayed with every hand visible (None if the deck failed)
    outcome: DealOutcome | None
    abandoned: bool  #: stopped by a deviation: nothing was scored

    @property
    def ok(self) -> bool:
        return self.verdict is None

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
) -> DealAudit:
    """Audit the chain of one deal (the messages in transcript order), signed scores included,
    with the signed messages kept outside the chain (``Transcript.evidence``): those can
    prove a deviation by themselves, which stopped the deal as it did at every seat."""
    public = PublicDeal(table, deal_number, dealer)
    for message in messages:
        public.apply(message)
    offence = signed_offence(table.members, [*messages, *evidence])
    if public.verdict is None and offence is not None:
        public.verdict = offence
    audit = audit_public(public)
    wrong = wrong_signature(public, audit)
    if wrong is not None and audit.verdict is None:
        return replace(audit, verdict=wrong)
    return audit


def audit_transcript(transcript: Transcript) -> tuple[TableSetup, int, DealAudit]:
    """Audit a saved transcript (read with ``Transcript.from_bytes``), its evidence included:
    the table it names, the dealer every seat committed to, and the audit."""
    table = TableSetup(transcript.table_id, transcript.members, transcript.names)
    dealer = dealer_of(transcript.messages)
    return table, dealer, audit_deal(table, transcript.deal, dealer, transcript.messages, transcript.evidence)


def signed_offence(members: Sequence[bytes], messages: Iterable[Message]) -> Verdict | None:
    """A deviation that signed messages prove by themselves, whenever they arrived: two
    messages for one slot (equivocation), a message signed for another member's seat
    (impersonation), a message of a kind the deal never uses.  A seat stops the deal on the
    first it receives (:class:`~protocol.machine.SeatMachine`); with several, the audit
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


def signed_score(audit: DealAudit) -> dict[str, WirePayload]:
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


#: Audits by transcript head, live verdict and trusted seats.  The audit is a pure function of
#: the chain, of the signed proof that stopped the deal outside it, if any (an equivocation),
#: and of the seats whose deck steps it took as published: seats that share a process (the
#: simulator) need not replay the deck five times, but an audit that trusted one seat's steps
#: is no audit for a caller that trusts another's.
_BY_HEAD: dict[tuple[bytes, Verdict | None, frozenset[int]], DealAudit] = {}
_BY_HEAD_SIZE = 16


def audit_public(public: PublicDeal, head: bytes | None = None, trusted: frozenset[int] = frozenset()) -> DealAudit:
    """Audit a deal whose chain ``public`` has already followed (a seat's own replica), and
    whose transcript ends at ``head`` when given.

    ``trusted``: the seats whose shuffle and lock steps the caller computed itself (a daemon's
    own seats), taken as published rather than replayed — see
    :func:`~protocol.audit_deck.audit_deck`.  A deviation in those steps is not found."""
    key = None if head is None else (head, public.verdict, trusted)
    if key is not None and key in _BY_HEAD:
        return _BY_HEAD[key]
    result = _audit(public, trusted)
    if key is not None:
        if len(_BY_HEAD) >= _BY_HEAD_SIZE:
            del _BY_HEAD[next(iter(_BY_HEAD))]
        _BY_HEAD[key] = result
    return result


def _audit(public: PublicDeal, trusted: frozenset[int]) -> DealAudit:
    table, dealer = public.table, public.dealer
    revealed = {seat: public.seeds.get(seat) for seat in range(table.players)}
    deck = audit_deck(public.deck.record, revealed, trusted)
    verdict = _first_verdict(public, deck.verdict)
    zeros = tuple(0 for _ in range(table.players))
    if deck.verdict is not None or len(deck.hands) != table.players:
        return DealAudit(verdict, zeros, None, None, None, abandoned=True)
    referee = Deal(table.variant, dealer, tuple(deck.hands[s] for s in range(table.players)), deck.chien)
    false_reports = _bad_hand_reporters(public)
    if verdict is None or not verdict.attributed:
        if false_reports:
            reason = "reported a hand that does not decrypt, but every step replays exactly"
            verdict = Verdict(false_reports[0], "deal", reason, ())
    if public.stopped or verdict is not None:
        return DealAudit(verdict, zeros, None, referee, None, abandoned=True)
    return _replay_game(table, public, referee, deck.ecart)


def _first_verdict(public: PublicDeal, deck_verdict: Verdict | None) -> Verdict | None:
    """The live verdict, unless it could not name a seat and the seeds now can."""
    live = public.verdict
    if live is None or not live.attributed:
        return deck_verdict or live
    return live


def _bad_hand_reporters(public: PublicDeal) -> list[int]:
    return [seat for seat in sorted(public.hand_reports) if public.hand_status(seat) == "bad-hand"]


def _replay_game(table: TableSetup, public: PublicDeal, referee: Deal, ecart: tuple[Card, ...] | None) -> DealAudit:
    zeros = tuple(0 for _ in range(table.players))
    declared_void = public.game is not None and public.game.phase is Phase.VOID
    if referee.phase is Phase.VOID:
        if declared_void:
            return DealAudit(None, zeros, None, referee, None, abandoned=False)
        holder = next(s for s, h in enumerate(referee.dealt) if h is not None and has_petit_sec(h))
        verdict = Verdict(holder, "petit_sec", "held the petit sec and did not show it", ())
        return DealAudit(verdict, zeros, holder, referee, None, abandoned=False)
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
            renonce = renonce or Verdict(message.seat, "play", f"renonce: {offence.reason}", evidence)
            try:
                referee.push(action, strict=False)
                continue
            except RuleError:
                pass
        # Broken before the play (a false call, poignée or écart), or a card the player never
        # held: the deal cannot be scored as played.  Annulled, with the penalty.
        return DealAudit(offence, zeros, message.seat, referee, None, abandoned=False)
    outcome = referee.outcome()
    if outcome is None or referee.taker is None:  # pragma: no cover - a finished replay is scored
        return DealAudit(renonce, zeros, None, referee, None, abandoned=False)
    score = score_deal(outcome)
    row = tuple(score_row(score, table.players, referee.taker, referee.partner))
    if renonce is None or renonce.seat is None:
        return DealAudit(None, row, None, referee, outcome, abandoned=False)
    offender_won = (referee.camp(renonce.seat) is Camp.ATTACK) == score.won
    return DealAudit(renonce, zeros if offender_won else row, renonce.seat, referee, outcome, abandoned=False)
