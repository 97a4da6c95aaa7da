"""Randomized set publishing (papers 000, 004, 001): every record keeps its
row and each sensitive cell becomes a random set of values; analysts
reconstruct distributions from the sets.

Modules: :mod:`.params` (Algorithm 1 of paper 000: (p_j, eta_j) for a
privacy model), :mod:`.closeness_search` (the worst case of eq. 12 over every
possible published set), :mod:`.publish` (the sampler of Sec. V-B),
:mod:`.settable` (the published table and its file formats),
:mod:`.reconstruct` and :mod:`.crosstab` (Sec. V-D: EM and baselines),
:mod:`.semantic` (paper 001, (l,d)-semantic diversity).
"""
