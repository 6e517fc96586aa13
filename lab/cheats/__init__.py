"""The cheat lab: attacks run by one seat of a table, which the honest seats must name with a
proof and without blaming anyone else.  ``attacks`` are the modified seat machines; ``runs``
plays them in one process (what ``tests/test_cheats.py`` asserts on, ``scripts/cheat-lab``);
``daemon`` is what ``tarotd --cheat`` adds around one.  The product loads this package only
when a cheat is asked for: ``tarot sim --cheat`` (``client/simulation.py``) and ``tarotd
--cheat`` (``tarotd/runner.py``) import it inside the code that runs the attack."""
