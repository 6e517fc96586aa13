"""The lab: what measures, attacks and exercises the product, apart from the product.

``protocol/``, ``tarotd/`` and ``client/`` are what a player installs and runs; ``lab/`` holds
the tools that measure them (``lab/bench/``, ``tarot bench``), the cheat lab's attacks and
their runs (``lab/cheats/``: ``scripts/cheat-lab``, ``tarot sim --cheat``, ``tarotd --cheat``),
a LAN of network namespaces to run them on (``lab/lansim.py``, ``scripts/lan-sim``), real
daemons on 127.0.0.1 for long runs and tests (``lab/loopback.py``, ``lab/fleet.py``:
``scripts/soak``, ``scripts/crash-storm``), and the terminal client driven in tmux for its
screenshots (``lab/tmux.py``, ``lab/screenshots.py``).  It is installed and type-checked like
the rest (pyproject.toml).

The dependency goes one way: the lab imports the product, the product names no module of the
lab (``tests/test_layers.py``), so that what a player runs does not depend on the lab.  What
the lab adds to the programs — ``tarot bench``, the attacks of ``--cheat`` — it plugs in
through the entry points pyproject.toml declares for it (``protocol/plugins.py``).
"""
