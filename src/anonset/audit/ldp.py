"""Local differential privacy of the set mechanisms: the epsilon of paper
000's randomized sets (Sec. V-B) and of paper 001's semantic sets, per
attribute.

A mechanism M is epsilon-LDP when P(M(v) = S) <= e^epsilon P(M(w) = S) for
every output S and every two inputs v, w.  Paper 000's mechanism with
parameters (p, eta, d): with probability p the set is the true value plus a
uniform (eta - 1)-subset of the other d - 1 values, otherwise a uniform
eta-subset of all d values.  So for a set S of size eta,

    P(S | v) = p [v in S] / C(d-1, eta-1) + (1 - p) / C(d, eta).

The ratio is largest for a set that holds v but not w (such a set exists iff
eta < d):

    e^epsilon = 1 + p C(d, eta) / ((1 - p) C(d-1, eta-1)) = 1 + p d / ((1 - p) eta),

so epsilon = ln(1 + p d / ((1 - p) eta)) for p < 1 and eta < d, 0 for
eta = d (every set is the whole domain), and infinite for p = 1 with
eta < d: a set that omits w is impossible when the truth is w.  Publishing
with p = 1 -- every diversity and anonymity model of paper 000, and paper
001 -- is therefore NOT differentially private; those models bound class
frequencies instead.  Paper 001's sampler always includes the true value,
so its epsilon is infinite unless every set is the same (the number of
publishable values equals l).  The q sets of one record are drawn
independently, so a record's epsilon is the sum over its attributes
(sequential composition).  Tested against the brute-force maximum ratio over
every set (tests/test_audit_honest.py).
"""
from __future__ import annotations

import math

import pandas as pd

__all__ = ["set_epsilon", "semantic_epsilon", "epsilon_table"]


def set_epsilon(p: float, eta: int, d: int) -> float:
    """LDP epsilon of paper 000's set mechanism with parameters (p, eta, d).

    Examples
    --------
    >>> round(set_epsilon(0.5, 2, 10), 6)           # ln(1 + 0.5 * 10 / (0.5 * 2))
    1.791759
    >>> set_epsilon(1.0, 3, 10), set_epsilon(1.0, 10, 10)
    (inf, 0.0)
    """
    p, eta, d = float(p), int(eta), int(d)
    if eta >= d or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return math.inf
    return math.log1p(p * d / ((1.0 - p) * eta))


def semantic_epsilon(distance, l: int, d: float) -> tuple:
    """(epsilon, reason) of paper 001's (l, d)-semantic sampler.

    Examples
    --------
    >>> from anonset.semantic import SemanticDistance
    >>> semantic_epsilon(SemanticDistance.ordered(6), 2, 3)[0]
    inf
    """
    from ..randomized.semantic import feasible_values
    publishable = int(feasible_values(distance, l, d).sum())
    if publishable <= l:
        return 0.0, (f"only {publishable} value(s) can be published, so every set is the same "
                     "and reveals nothing")
    return math.inf, ("the true value is always in its set (Definition 1): a set that omits "
                      "w is impossible when the truth is w")


def _semantic_row(table, name: str):
    model = table.model or {}
    if model.get("name") != "semantic" or model.get("sensitive") != name:
        return None
    from ..randomized.semantic import SemanticDistance
    dist = SemanticDistance.from_dict(model["distance"], table.schema[name])
    eps, why = semantic_epsilon(dist, int(model["l"]), float(model["d"]))
    return {"mechanism": "semantic (paper 001)", "epsilon": eps, "note": why}


def epsilon_table(table) -> pd.DataFrame:
    """Per randomized attribute: mechanism, p, eta, d, epsilon and a note in
    words; a last row 'record' with the sum (sequential composition).

    ``table`` needs ``names``, ``params``, ``schema`` and ``model`` (a
    SetTable or a file's header).  Attributes published exactly by
    declaration (exact QIDs) are not randomized and not listed.

    Examples
    --------
    >>> import pandas as pd, anonset
    >>> pub = anonset.publish(pd.DataFrame({"a": list("xyzxyw")}), anonset.Diversity(2),
    ...                       sensitive=["a"], domains={"a": list("wxyz")})
    >>> epsilon_table(pub)["epsilon"].tolist()
    [inf, inf]
    """
    rows = []
    for name in table.names:
        par = table.params[name]
        if par.exact:
            continue
        row = {"attribute": name, "mechanism": "random sets (paper 000)", "p": par.p,
               "eta": par.eta, "d": par.d}
        sem = _semantic_row(table, name)
        if sem is not None:
            row.update(sem)
        else:
            eps = set_epsilon(par.p, par.eta, par.d)
            row["epsilon"] = eps
            if math.isinf(eps):
                row["note"] = ("p = 1: the true value is always in its set, so publishing "
                               "is not differentially private")
            elif eps == 0.0:
                row["note"] = "the set reveals nothing about the true value"
            else:
                row["note"] = f"every set is at most {math.exp(eps):.4g} times likelier " \
                              "under one true value than under another"
        rows.append(row)
    if rows:
        total = sum(r["epsilon"] for r in rows)
        rows.append({"attribute": "record", "mechanism": "all sets of a record", "p": math.nan,
                     "eta": math.nan, "d": math.nan, "epsilon": total,
                     "note": "sum over the attributes (sequential composition)"})
    return pd.DataFrame(rows, columns=["attribute", "mechanism", "p", "eta", "d", "epsilon",
                                       "note"])
