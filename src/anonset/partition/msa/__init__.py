"""t-closeness for several sensitive attributes by partition publishing
(paper 003: Wang, Zhu, Chen, Chang, JCST 2018).

Three algorithms put the records into equivalence classes, generalize the
quasi-identifiers (QIs) of each class to their lowest common ancestor (a
range for numeric QIs, a hierarchy node for categorical ones) and keep the
sensitive attributes (SAs) exact:

``cluster``   Algorithm 1: equi-sized fuzzy c-means (Hoppner & Klawonn's
              size-constrained FCM, the paper's ref. [19]) over the SA distance
              of eq. 3 splits the records into k clusters of floor(n/k) or
              ceil(n/k) records; GenerateEquivalenceClasses (Pseudocode 1)
              then builds each class from one record per cluster (QI-nearest
              to a random seed, eq. 2) and EnsureTCloseness (Pseudocode 2)
              merges every class that violates t with the class whose
              centroid is nearest, until all satisfy t (Def. 4).
``pca``       Algorithm 2: records sorted by the first principal component of
              the SAs (one-hot for categorical ones), split into k' groups
              with the k-adjustment formula, then the same two steps.
``microagg``  The contrast: t-closeness-first microaggregation (Soria-Comas et
              al. 2015, ref. [9], their Algorithm 3) adapted to several SAs:
              k' from their EMD bound, records in joint SA order split into k'
              subsets, MDAV-style classes (seed = record farthest from the
              centroid of the remaining ones), Pseudocode 2 where Def. 4 still
              fails.

Every output satisfies k-anonymity and t-closeness for every SA (Def. 4)
under the declared ground distances; tests check it with
:func:`anonset.checks.check_partition`.  Choices where the paper is silent are
listed in docs/msa.md.  Every input column needs a role (QI, sensitive,
identifier, other = passed through, or drop); the rows are published grouped
by class, with class labels and the order inside a class drawn from the
release's key (``keep_order=True`` keeps the input order and says so).

Modules: :mod:`.encoding` (eqs. 2-3, attribute tables), :mod:`.clustering`
(k adjustment, PCA order, equal-size FCM), :mod:`.problem` (the encoded table
and the steps, Pseudocodes 1-2), :mod:`.result` (the published table, IL).

Examples
--------
>>> import pandas as pd
>>> from anonset.msa import anonymize_msa
>>> df = pd.DataFrame({"age": [21, 25, 33, 38, 45, 52, 58, 63],
...                    "sex": list("MFMFMFMF"),
...                    "job": list("abcdabcd"), "edu": [1, 2, 3, 4, 4, 3, 2, 1]})
>>> r = anonymize_msa(df, ["age", "sex"], ["job", "edu"], k=2, t=0.5,
...                   algorithm="pca", seed="d1f3a8c04e9b27f65a0c3e81b7d9f246")
>>> r.k_achieved >= 2 and r.t_achieved <= 0.5
True
"""
from .clustering import adjusted_k, equisized_fcm, pca_order, split_sizes
from .encoding import dist_cat, dist_num
from .problem import ALGORITHMS, MSAProblem
from .result import MSAResult, anonymize_msa, information_loss

__all__ = ["ALGORITHMS", "MSAProblem", "MSAResult", "anonymize_msa", "equisized_fcm",
           "pca_order", "adjusted_k", "split_sizes", "information_loss", "dist_num",
           "dist_cat"]
