"""The lab: what measures, attacks and exercises the product, apart from the product.

``protocol/``, ``tarotd/`` and ``client/`` are what a player installs and runs; ``lab/`` holds
the tools that measure them (``lab/bench/``, ``tarot bench``).  It is installed and type-checked
like the rest (pyproject.toml).

The dependency goes one way: the lab imports the product, the product never imports the lab at
module level.  Where a product command starts a lab tool — ``tarot bench`` — the import is made
when the parser is built (``client/cli.py`` loads every subcommand's module by name).
"""
