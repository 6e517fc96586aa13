"""The cheat lab: attacks run by one seat of a table, which the honest seats must name with a
proof and without blaming anyone else.  ``attacks`` are the modified seat machines; ``runs``
plays them in one process (what ``tests/test_cheats.py`` asserts on, ``scripts/cheat-lab``).
The programs find the attacks through the entry point ``tarot.cheats: lab``
(``attacks.LAB``, ``protocol/plugins.py``): ``tarot sim --cheat`` and ``tarotd --cheat`` load
them only when a cheat is asked for, and name no module of the lab."""
