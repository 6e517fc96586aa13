"""One deal, replicated by its seats with no server: the signed messages and their payloads,
the transcript, the seat's state machine and the public one every daemon replays, the
table's manifest, the verdicts that name a cheater, the agreement on who timed out, and the
end-of-deal audit.  Sans IO."""
