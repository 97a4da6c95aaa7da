"""Type aliases of the public API's signatures (no run-time behaviour).

They name what the functions accept in one place, so that the hints read as
the docstrings do; pandas and pyarrow ship no type information, so frames
and tables are ``Any`` to a type checker.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Mapping, Sequence, Union

import numpy as np

if TYPE_CHECKING:
    from .emd import Ground
    from .models import Anonymity, Closeness, Diversity, DiversityCloseness

#: a file path
PathLike = Union[str, "os.PathLike[str]"]
#: a pandas DataFrame or a pyarrow Table (or what anonset.schema accepts as one)
TableLike = Any
#: key material: bytes, a hex string, or an int (>= 128 bits unless
#: research_seed); None draws a fresh key from the operating system
Seed = Union[int, np.integer, bytes, str, None]
#: a privacy model of paper 000
Model = Union["Diversity", "Anonymity", "Closeness", "DiversityCloseness"]
#: attribute names
Names = Union[str, Sequence[str]]
#: a distribution or counts over a domain
Weights = Union[Sequence[float], np.ndarray]
#: a ground distance: 'equal', 'ordered', 'hierarchical', the values' positions, or a Ground
GroundSpec = Union[str, "Ground", Sequence[float], np.ndarray]
#: one value for all attributes, or one per attribute
PerAttribute = Union[float, Mapping[str, float]]

__all__ = ["PathLike", "TableLike", "Seed", "Model", "Names", "Weights", "GroundSpec",
           "PerAttribute"]
