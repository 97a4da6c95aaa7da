"""Paper 001's education tree (Fig. 7, Sec. 6.3), as its text describes it.

The paper classifies Adult's 16 education values in a tree of depth 4 taken
from a config.xml it cites, uses only the depth-4 leaves, and defines the
distance of two values as the height of their lowest common ancestor.  Its
figure is not legible in our copy; the text fixes these facts about it:

* Doctorate and Masters are the leaves under "Post grad" (distance 1);
* Prof-school and Bachelors are the other descendants of "University"
  (distance 2 from Doctorate);
* "Assoc", "Some-college" and "Secondary" are further categories (distance
  3 or 4 from Doctorate).

:data:`PATHS` completes a depth-4 tree consistent with these facts (the
grouping of the school grades below Secondary and Primary is ours).  The
hierarchy shipped with Adult (``adult_hierarchy("education")``, ARX's) is a
different, depth-3 tree: there Doctorate's distance-2 values are all of
"Higher education" (Bachelors, Some-college, Prof-school, Assoc-acdm,
Assoc-voc), against only Prof-school and Bachelors in the paper.

The paper's own example of (3, 2)-semantic diversity ("two dummies from
Assoc, Some-college, Secondary, or another category") excludes Prof-school
and Bachelors, which are at distance exactly 2; under the definition
(distance >= d) they are allowed.  We follow the definition.
"""
from __future__ import annotations

import pandas as pd

from ..hierarchy import Hierarchy

__all__ = ["PATHS", "education_fig7", "adult_education_fig7"]

#: leaf -> depth-3 node -> depth-2 node -> depth-1 node -> root
PATHS = (
    ("Doctorate", "Post grad", "University", "Higher education", "*"),
    ("Masters", "Post grad", "University", "Higher education", "*"),
    ("Prof-school", "Undergrad", "University", "Higher education", "*"),
    ("Bachelors", "Undergrad", "University", "Higher education", "*"),
    ("Assoc-acdm", "Assoc", "College", "Higher education", "*"),
    ("Assoc-voc", "Assoc", "College", "Higher education", "*"),
    ("Some-college", "Some-college", "College", "Higher education", "*"),
    ("HS-grad", "Senior", "High school", "Secondary", "*"),
    ("12th", "Senior", "High school", "Secondary", "*"),
    ("11th", "Senior", "High school", "Secondary", "*"),
    ("10th", "Junior", "High school", "Secondary", "*"),
    ("9th", "Junior", "High school", "Secondary", "*"),
    ("7th-8th", "Middle", "Elementary", "Primary", "*"),
    ("5th-6th", "Middle", "Elementary", "Primary", "*"),
    ("1st-4th", "Early", "Elementary", "Primary", "*"),
    ("Preschool", "Early", "Elementary", "Primary", "*"),
)


def education_fig7() -> Hierarchy:
    """The depth-4 education tree of paper 001's Fig. 7 (see the module docs).

    Examples
    --------
    >>> h = education_fig7()
    >>> h.height, h.d
    (4, 16)
    >>> i = {v: k for k, v in enumerate(h.leaves)}
    >>> h.lca_height(i["Doctorate"], i["Masters"]), h.lca_height(i["Doctorate"], i["Bachelors"])
    (1, 2)
    """
    return Hierarchy(PATHS)


def adult_education_fig7():
    """Adult with sensitive 'education' under the Fig. 7 tree (a
    :class:`~anonset.datasets.semantic.SemanticDataset`, QIDs age decade and
    sex, as :func:`anonset.datasets.semantic.adult_education`)."""
    from ..randomized.semantic import SemanticDistance
    from .semantic import SemanticDataset, adult_education
    base = adult_education()
    h = education_fig7()
    frame = pd.DataFrame(base.frame)
    return SemanticDataset(frame, "education", base.qids, tuple(h.leaves),
                           SemanticDistance.tree(h))
