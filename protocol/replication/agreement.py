"""One row for every member: the rule a seat follows when the others went on without it.

Each seat times the others out on its own clock, so a cut cable, a laptop asleep or a daemon
killed between its last card and its reveal leaves the members with different chains — and,
before this rule, different rows for one deal: "abandoned by bob" here, "abandoned by carol"
there, "ok" at the seat that came back late.

**The rule: the others' word decides for the seat they timed out.**  A seat that learns, from
the signed messages of *every* other answering member, that they timed it out and went on
without it, takes their chain: it goes back to the head where they left it and goes on from
there as a seat that stopped answering — it sends nothing more in the deal, and its row is
theirs.  Two signs say it:

* **before the reveal**: every other answering member's reveal names it among the seats gone
  (``gone``), all built on one head this seat reached (:func:`timed_out_before_reveal`);
* **at the reveal**: every other member that revealed signed the score on the head of the
  reveal round *without* this seat's reveal — its reveal came too late for them
  (:func:`left_out_of_reveal`).

Every other member must say it, not one: a single hostile member cannot push an honest seat out
of a deal by naming it gone.

**A seat alone does not settle a deal.**  A seat that timed out at least as many members as
answered (a minority: only itself, at three) cannot tell a table that went silent from a cable
of its own that was cut.  Its record of a deal stopped that way is *unsettled*
(:func:`settled`): it keeps the deal open until it hears the others, and then takes their
chain by the rule above.  With exactly half on each side (two and two at four), the half with
seat 0 settles.  The majority's record stands at once; the next deal needs every member
anyway, so nothing waits that could have gone on.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Final

from protocol.deck.proofs import frame
from protocol.replication.identity import Identity, verify
from protocol.replication.messages import Kind, Message
from protocol.replication.payloads import timed_out_in
from protocol.replication.transcript import Transcript, next_head


def settled(players: int, stalled: Collection[int], tie_break: bool = True) -> bool:
    """Whether a record with ``stalled`` seats timed out can stand: the seats that answered are
    a majority, or exactly half with seat 0 among them.

    ``tie_break=False`` asks for a strict majority: for the timeouts of the reveal and the
    signatures, where the members that answer are no longer two clean halves — a seat can be
    in the round of two different heads (the half holding seat 0 closing its round without a
    reveal that the other members' round holds), and each head then waits for the other's
    signatures for ever.  Without the tie-break such a half waits for the network (or votes
    the deal void with the others)."""
    answering = players - len(stalled)
    return 2 * answering > players or (tie_break and 2 * answering == players and 0 not in stalled)


def timed_out_before_reveal(
    seat: int, players: int, kept: Iterable[Message], reached: Callable[[bytes], bool]
) -> tuple[bytes, frozenset[int]] | None:
    """The head every other answering member timed ``seat`` out at, and the seats they timed
    out, if their reveals — all built on one head this seat reached — say so together."""
    reveals = [
        m for m in kept if m.kind is Kind.REVEAL and m.seat != seat and seat in timed_out_in(m)
    ]
    for reveal in reveals:
        gone = frozenset(timed_out_in(reveal))
        if not reached(reveal.prev):
            continue
        claims = {m.seat for m in reveals if m.prev == reveal.prev and timed_out_in(m) == gone}
        if claims == set(range(players)) - gone:
            return reveal.prev, gone
    return None


def left_out_of_reveal(
    seat: int, transcript: Transcript, kept: Iterable[Message]
) -> tuple[int, list[Message]] | None:
    """Where the reveal round of ``transcript``'s chain starts, and the other seats' reveals in
    it, if every one of those seats signed the score on the head the round has without
    ``seat``'s reveal (they closed it before it came)."""
    chain = transcript.messages
    start = next((i for i, m in enumerate(chain) if m.kind is Kind.REVEAL), None)
    if start is None:
        return None
    end = next(
        (i for i in range(start, len(chain)) if chain[i].kind is not Kind.REVEAL), len(chain)
    )
    round_ = chain[start:end]
    others = [m for m in round_ if m.seat != seat]
    if len(others) == len(round_) or not others:
        return None  # this seat's reveal is not in the round, or it revealed alone
    head = transcript.head_before(start)
    for message in others:
        head = next_head(head, message)
    signers = {m.seat for m in kept if m.kind is Kind.SCORE_SIGN and m.prev == head}
    return (start, others) if signers >= {m.seat for m in others} else None


#: The domain of a vote to void a deal: no message, manifest or mesh frame shares it.
VOID_DOMAIN: Final = b"tarot/v2/void-deal"


def void_statement(table_id: bytes, deal: int) -> bytes:
    """What a seat signs to vote that a deal be void (:func:`void_certified`)."""
    return frame(VOID_DOMAIN, table_id, deal.to_bytes(4, "big"))


def void_vote(identity: Identity, table_id: bytes, deal: int) -> bytes:
    """A seat's vote to void the deal: it will sign nothing more in it."""
    return identity.sign(void_statement(table_id, deal))


def void_certified(
    table_id: bytes, members: tuple[bytes, ...], deal: int, votes: Mapping[int, bytes]
) -> bool:
    """Whether ``votes`` (seat → signature) void the deal: a quorum of seats, each vote its
    seat's own signature.

    **Why a void certificate.**  Members cut off from each other in several places at once
    can each time out a different seat, each with a quorum in its own view — A times out C,
    B times out A, C times out B — and then none of their records can stand, whatever comes
    later: each revealed its seed on a chain the others do not share.  A seat that cannot
    settle (it would time out as many seats as answer) and hears that a quorum is in the same
    state votes to void the deal and signs nothing more in it; a quorum of votes voids it for
    everyone, scoring nothing and charging nobody.  A void and a closing of one deal cannot
    both be certified: their quorums share a seat, which would have voted and signed a score
    — an honest seat does one or the other."""
    players = len(members)
    if not votes or not all(0 <= seat < players for seat in votes):
        return False
    statement = void_statement(table_id, deal)
    if not all(verify(members[seat], sig, statement) for seat, sig in votes.items()):
        return False
    return settled(players, set(range(players)) - set(votes))
