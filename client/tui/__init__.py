"""The full-screen terminal client (``tarot``): a thin view over the daemon's local API.

One idea per module: :mod:`i18n` (the words, French and English), :mod:`choose` (what the
player may pick, pure), :mod:`model` (the state the screen draws), :mod:`cards` (a card on
screen), :mod:`table`, :mod:`lobby`, :mod:`journal` and :mod:`sheet` (the screens as
formatted text) and :mod:`app` (the prompt-toolkit application and its keys).
"""
