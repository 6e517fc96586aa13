"""The audit of a deal's deck: replay every step from the revealed seeds.

During the deal every shuffle and lock is proved and every key checked against its
commitment, so what is left for the audit is what no live check can see without the secrets:
a re-commitment of a card the taker never had, a king hidden in the écart, a step a daemon
took on trust (its own seat's).  Every seat's secrets are derived again from its seed, every
published step is recomputed from the published step before it, and the first payload that
differs names its seat.  Recomputing each step from the
*published* previous one (not from the replay) is what pins a deviation on the seat that
made it rather than on everyone after it.

A seat that does not reveal its seed, or reveals one that does not match its commitment, is
named before anything is replayed: without its seed nothing of the deal can be checked.

Cost: the multiplications of every shuffle and lock step once more (78 each, and 78 by ``G``
for a lock's commitments: ≈ 800 at five seats), plus one per re-commitment of the écart.  A
daemon may skip the steps of the seats it hosts (``trusted``): it computed each of them
itself, from that seat's seed and the step published before it — the very inputs the replay
would use, with the same deterministic derivations and arithmetic — so replaying them could
only give back what it published.  Trust is for that case only: a step trusted is not checked
at all, so a deviation in it goes unnoticed by this audit (the other daemons, which do not host
that seat, replay it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import NoReturn

from protocol.deck.group import (
    CARD_POINTS,
    ORDER,
    GroupError,
    Point,
    base_mul_each,
    card_of,
    from_int,
    invert,
    mul,
    mul_batches,
    to_int,
)
from protocol.deck.payloads import (
    ChienKeys,
    Commit,
    DealKeys,
    DeckPayload,
    EcartCommitment,
    Lock,
    Open,
    Opening,
    OpenRecommitted,
    Reveal,
    Shuffle,
)
from protocol.deck.public_deck import DeckRecord
from protocol.deck.seeds import SEED_BYTES, SeatSecrets, commitment, derive
from protocol.replication.verdict import KEPT_SEED, Fault, Verdict, VerdictError
from protocol.rules.cards import DECK, Card


@dataclass(frozen=True)
class DeckAudit:
    """The outcome: a verdict (None when every step replays exactly) and the true deal, as
    far as the replay got."""

    verdict: Verdict | None
    hands: dict[int, tuple[Card, ...]] = field(default_factory=dict)  #: dealt hands, pack order
    chien: tuple[Card, ...] = ()
    ecart: tuple[Card, ...] | None = None  #: the cards the taker really discarded

    @property
    def clean(self) -> bool:
        return self.verdict is None


def audit_deck(
    record: DeckRecord,
    revealed: Mapping[int, bytes | None],
    trusted: frozenset[int] = frozenset(),
) -> DeckAudit:
    """Replay ``record`` with the seeds each seat revealed (None: the seat refused).

    The shuffle and lock steps of the seats in ``trusted`` are taken as published: neither
    multiplied nor compared.  Everything else is as without trust — every seat's seed is
    checked against its commitment, the cards are followed through every step (a trusted
    shuffle still moves them), keys, openings and the écart are checked.  Trust only the
    steps you computed yourself: a deviation in a trusted step is, by design, not found.
    """
    replay = _Replay(record, trusted)
    try:
        replay.run(revealed)
    except VerdictError as error:
        return replay.result(error.verdict)
    return replay.result(None)


def open_deck(record: DeckRecord, chien: tuple[Card, ...] | None) -> DeckAudit:
    """The deal as its open record shows it, without a single seed: for a deal whose every
    card was played, when a seat kept its seed (``chien``: the chien if it was turned).

    Every card played, poignée shown or king shown for a call was opened at a pack position,
    with every seat's key checked against its commitment, so it is proven to lie there; a seat
    that played all its cards so opened all its positions: its hand is open.  The taker of a
    Petite or a Garde alone plays from its re-commitments, proven against nothing but its own
    word — yet every other hand is open and the chien was turned, so its hand is what is left
    of the 78 cards, and its écart is its hand and the chien less the cards it kept (opened
    from its re-commitments, every one of them played).  A Garde Sans or a Garde Contre turns
    no chien, and every hand is open: the chien is what is left.  The live checks refused any
    card opened twice, so these sets never overlap.

    What only the seeds would show is no longer needed: a re-commitment of a card the taker
    never had changed nothing that counts, since the score is of the cards it really had.  The
    écart's rules are checked on the cards it really held: a king or a bout is the referee's
    to refuse; a trump it did not show is named here.  The taker's hand and its écart come in
    the deck's order, not in pack order: its positions were never opened."""
    layout = record.setup.layout
    opened: dict[int, Card] = {}  # pack position → the card opened there
    kept: set[Card] = set()  # the cards the taker opened from its re-commitments
    ecart: tuple[EcartCommitment, int] | None = None
    for index, payload in enumerate(record.payloads):
        match payload:
            case Open():
                opened.update((o.where, DECK[o.card]) for o in payload.openings)
            case OpenRecommitted():
                kept.update(DECK[o.card] for o in payload.openings)
            case EcartCommitment():
                ecart = payload, index
    taker = None if ecart is None else ecart[0].seat
    hands = {
        seat: tuple(opened[j] for j in layout.positions_of(seat))
        for seat in range(record.setup.players)
        if seat != taker
    }
    dealt = {card for hand in hands.values() for card in hand}
    if chien is None:
        chien = tuple(card for card in DECK if card not in dealt)
    if ecart is None:
        return DeckAudit(None, hands, chien)
    payload, index = ecart
    hands[payload.seat] = tuple(card for card in DECK if card not in dealt and card not in chien)
    held = {*hands[payload.seat], *chien}
    discarded = tuple(card for card in DECK if card in held and card not in kept)
    audit = DeckAudit(None, hands, chien, discarded)
    try:
        _check_shown(payload, discarded, _ref(payload, index))
    except VerdictError as error:
        return replace(audit, verdict=error.verdict)
    return audit


def _check_shown(p: EcartCommitment, ecart: Sequence[Card], ref: str) -> None:
    """Every trump of the écart was shown when it was discarded (the only rule of the écart
    that its cards alone, not the taker's hand, decide)."""
    shown = {DECK[o.card] for o in p.openings}
    hidden = [card.code for card in ecart if card.is_trump and card not in shown]
    if hidden:
        _fail(p.seat, "ecart", f"did not show the discarded trumps {', '.join(hidden)}", ref)


def _fail(seat: int, step: str, reason: str, *evidence: str) -> NoReturn:
    raise VerdictError(Verdict(seat, step, f"{reason} (found by the audit)", evidence))


def _ref(payload: DeckPayload, index: int) -> str:
    return f"{payload.KIND}/{payload.seat}@{index}"


class _Replay:
    def __init__(self, record: DeckRecord, trusted: frozenset[int]) -> None:
        self.record = record
        self.trusted = trusted  # seats whose shuffle and lock are taken as published
        self.setup = record.setup
        self.secrets: dict[int, SeatSecrets] = {}
        self.cards: list[int] = list(range(78))  # the card under each point of the latest step
        self.locks = 0
        self.hands: dict[int, tuple[Card, ...]] = {}
        self.chien: tuple[Card, ...] = ()
        self.recommitted: list[int] = []  # the card under each of the taker's re-commitments
        self.ecart: tuple[Card, ...] | None = None
        self.products: dict[tuple[int, str], list[Point] | GroupError] = {}

    def result(self, verdict: Verdict | None) -> DeckAudit:
        return DeckAudit(verdict, self.hands, self.chien, self.ecart)

    def run(self, revealed: Mapping[int, bytes | None]) -> None:
        self._check_seeds(revealed)
        self.products = self._multiply()
        for index, payload in enumerate(self.record.payloads):
            ref = _ref(payload, index)
            match payload:
                case Shuffle():
                    self._shuffle(payload, index, ref)
                case Lock():
                    self._lock(payload, index, ref)
                case DealKeys():
                    self._keys(
                        payload.seat,
                        "deal",
                        self.setup.dealt_to_others(payload.seat),
                        payload.keys,
                        ref,
                    )
                case ChienKeys():
                    self._keys(
                        payload.seat, "chien", self.setup.layout.chien_positions, payload.keys, ref
                    )
                case Open():
                    self._open(payload, ref)
                case EcartCommitment():
                    self._ecart(payload, ref)
                case OpenRecommitted():
                    self._open_recommitted(payload.seat, "open", payload.openings, ref)
                case Commit() | Reveal():
                    pass  # checked with the seeds, before the replay

    def _check_seeds(self, revealed: Mapping[int, bytes | None]) -> None:
        setup = self.setup
        commits = {
            p.seat: (p, index)
            for index, p in enumerate(self.record.payloads)
            if isinstance(p, Commit)
        }
        for seat in range(setup.players):
            if seat not in commits:
                _fail(seat, "commit", "never committed to a seed")
            commit, index = commits[seat]
            ref = _ref(commit, index)
            seed = revealed.get(seat)
            if seed is None:  # the others' word: it sent nothing
                raise VerdictError(
                    Verdict(
                        seat, "reveal", f"{KEPT_SEED} (found by the audit)", (ref,), Fault.SILENCE
                    )
                )
            if not isinstance(seed, bytes) or len(seed) != SEED_BYTES:
                _fail(seat, "reveal", "revealed something that is not a seed", ref)
            if commitment(seed, setup.table_id, setup.deal, seat) != commit.commitment:
                _fail(seat, "reveal", "its revealed seed does not match its commitment", ref)
            self.secrets[seat] = derive(seed, setup.table_id, setup.deal, seat, setup.variant)
            if self.secrets[seat].blanket_public != commit.blanket_public:
                _fail(seat, "commit", "its public key A is not the one its seed gives", ref)

    def _multiply(self) -> dict[tuple[int, str], list[Point] | GroupError]:
        """Every multiplication of the shuffles and locks, done at once: each step is replayed
        from the step published before it, not from the replay, so none waits for another
        and :func:`mul_batches` can spread them over the cores.  Keyed by (payload index,
        part); the replay then compares in order, so the first difference still names its
        seat.  A trusted seat's steps are not multiplied."""
        jobs: dict[tuple[int, str], tuple[list[bytes], Sequence[Point]]] = {}
        deck: Sequence[Point] = CARD_POINTS
        for index, payload in enumerate(self.record.payloads):
            if isinstance(payload, Shuffle):
                if self._replays(payload):
                    s = self.secrets[payload.seat]
                    jobs[index, "shuffled"] = (
                        [s.blanket] * len(deck),
                        [deck[k] for k in s.permutation],
                    )
                deck = payload.points
            elif isinstance(payload, Lock):
                if self._replays(payload):
                    s = self.secrets[payload.seat]
                    inverse = to_int(s.blanket_inverse)
                    jobs[index, "locked"] = (
                        [from_int(to_int(b) * inverse % ORDER) for b in s.lock_keys],
                        deck,
                    )
                deck = payload.locked
        return dict(zip(jobs, mul_batches(list(jobs.values()))))

    def _replays(self, step: Shuffle | Lock) -> bool:
        """Whether the step is recomputed and compared: not when its seat is trusted."""
        return step.seat not in self.trusted

    def _product(self, index: int, part: str) -> list[Point]:
        product = self.products[index, part]
        if isinstance(product, GroupError):
            raise product
        return product

    def _shuffle(self, p: Shuffle, index: int, ref: str) -> None:
        s = self.secrets[p.seat]
        if self._replays(p):
            expected = self._product(index, "shuffled")
            wrong = sum(1 for mine, theirs in zip(expected, p.points) if mine != theirs)
            if wrong:
                _fail(
                    p.seat,
                    "shuffle",
                    f"its shuffle differs from the one its seed gives at {wrong} of 78 points",
                    ref,
                )
        self.cards = [self.cards[k] for k in s.permutation]  # followed for a trusted seat too

    def _lock(self, p: Lock, index: int, ref: str) -> None:
        if self._replays(p):
            commitments = base_mul_each(list(self.secrets[p.seat].lock_keys))
            wrong = [
                j
                for j, (mine, theirs) in enumerate(zip(commitments, p.commitments))
                if mine != theirs
            ]
            if wrong:
                _fail(
                    p.seat,
                    "lock",
                    f"its key commitments B are not the keys its seed gives at positions {wrong}",
                    ref,
                )
            locked = self._product(index, "locked")
            wrong = [j for j, (mine, theirs) in enumerate(zip(locked, p.locked)) if mine != theirs]
            if wrong:
                _fail(
                    p.seat,
                    "lock",
                    "its locked points E differ from its keys times the previous step at "
                    f"positions {wrong}",
                    ref,
                )
        self.locks += 1
        if self.locks == self.setup.players:
            self._deal()

    def _deal(self) -> None:
        """All locks replayed: every position's card is known."""
        owner = self.setup.layout.owner
        for seat in range(self.setup.players):
            self.hands[seat] = tuple(DECK[self.cards[j]] for j in range(78) if owner[j] == seat)
        self.chien = tuple(DECK[self.cards[j]] for j in self.setup.layout.chien_positions)

    def _keys(
        self, seat: int, step: str, positions: Sequence[int], keys: Sequence[bytes], ref: str
    ) -> None:
        lock_keys = self.secrets[seat].lock_keys
        for j, key in zip(positions, keys):
            if key != lock_keys[j]:
                _fail(seat, step, f"published a key for position {j} that is not its lock key", ref)

    def _open(self, p: Open, ref: str) -> None:
        self._keys(p.seat, "open", [o.where for o in p.openings], [o.key for o in p.openings], ref)
        for o in p.openings:
            if self.cards[o.where] != o.card:
                _fail(
                    p.seat,
                    "open",
                    f"claimed {DECK[o.card].code} at position {o.where}, which holds another card",
                    ref,
                )

    def _ecart(self, p: EcartCommitment, ref: str) -> None:
        taker, keys = p.seat, self.secrets[p.seat].recommit_keys
        for k, point in enumerate(p.commitments):
            index = card_of(mul(invert(keys[k]), point))
            if index is None:
                _fail(
                    taker,
                    "ecart",
                    f"re-commitment {k} is not a card under the key its seed gives",
                    ref,
                )
            self.recommitted.append(index)
        had = Counter(card.index for card in (*self.hands[taker], *self.chien))
        extra = Counter(self.recommitted) - had
        if extra:
            codes = ", ".join(DECK[index].code for index in sorted(extra))
            _fail(taker, "ecart", f"re-committed {codes}, which it never had", ref)
        self._open_recommitted(taker, "ecart", p.openings, ref)
        ecart = tuple(DECK[self.recommitted[k]] for k in p.discarded)
        self.ecart = ecart
        for card in ecart:
            if card.is_king or card.is_bout:
                _fail(
                    taker,
                    "ecart",
                    f"discarded {card.code}: a king or a bout never goes to the écart",
                    ref,
                )
        chien_size = self.setup.variant.chien_size
        others = sum(
            1
            for index in self.recommitted
            if not DECK[index].is_trump and not DECK[index].is_bout and not DECK[index].is_king
        )
        unavoidable = max(0, chien_size - others)
        trumps = [card for card in ecart if card.is_trump]
        if len(trumps) > unavoidable:
            _fail(
                taker,
                "ecart",
                f"discarded {len(trumps)} trumps where {unavoidable} were unavoidable",
                ref,
            )
        _check_shown(p, ecart, ref)

    def _open_recommitted(
        self, seat: int, step: str, openings: Sequence[Opening], ref: str
    ) -> None:
        keys = self.secrets[seat].recommit_keys
        for o in openings:
            if o.key != keys[o.where] or o.card != self.recommitted[o.where]:
                _fail(
                    seat,
                    step,
                    f"opened re-commitment {o.where} with a key or card its seed does not give",
                    ref,
                )
