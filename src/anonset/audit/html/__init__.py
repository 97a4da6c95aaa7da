"""The release report (issue 18): one self-contained HTML page that lets a
data steward sign off a release -- what is published and how, the privacy
verdict of the audit with every check in plain words, the attack simulation
and the local differential privacy of each attribute, and what the analyst
will be able to reconstruct (papers 000, 004, 001), or the classes and the
information loss (papers 002, 003).  ``anonset report`` on the command line.

Modules, one job each: :mod:`.release` (what is reported on),
:mod:`.utility` (reconstructions and their error), :mod:`.charts` and
:mod:`.svg` (figures), :mod:`.page` (HTML), :mod:`.words` (plain words),
:mod:`.sections`, :mod:`.randomized`, :mod:`.partition` (the page's
sections), :mod:`.build` (:func:`report`).  See docs/report.md.
"""
from .build import report

__all__ = ["report"]
