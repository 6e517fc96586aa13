"""The cheat lab: attacks run by one seat of a table, which the honest seats must name with a
proof and without blaming anyone else.  ``runs`` plays them in one process (``tarot sim``'s
table, ``scripts/cheat-lab``); the attacks themselves are seat machines (``protocol/cheats.py``)
that ``tarot sim --cheat`` and ``tarotd --cheat`` (``tarotd/cheating.py``) run as well."""
