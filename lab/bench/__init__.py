"""``tarot bench``: the deck (``deck``), real daemons on 127.0.0.1 (``daemons``) and the
offline audit (``audit``), each summarised by ``stats`` and reported by ``cmd``."""
