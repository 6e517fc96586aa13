"""The game of French Tarot as the FFT plays it: the cards, what may be played, a deal's
course from the bids to the score, the scoring, the variants a table agrees on, the physical
deal and what one seat may know.  Pure functions and values: no cryptography, no network."""
