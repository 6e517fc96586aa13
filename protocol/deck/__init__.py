"""The deck nobody deals: a five-seat mental-poker shuffle and lock on ristretto255, their
zero-knowledge proofs, each seat's secrets derived from its seed, and the audit of a deal's
deck from the revealed seeds.  Sans IO."""
