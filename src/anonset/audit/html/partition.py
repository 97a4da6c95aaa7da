"""Sections of the release report for partition releases (papers 002 and
003, :mod:`anonset.audit.partition`): the columns and the attributes' roles
and parameters, the class adversary as a chart, histograms of the sizes of
classes, groups and buckets, and the information loss."""
from __future__ import annotations

import math

from . import charts
from .page import data_value, esc, facts, figure, num, table
from .words import ROLES

__all__ = ["columns", "attack", "sizes", "utility"]

#: Histograms at most (groups or classes first, then buckets per attribute).
MAX_HISTOGRAMS = 8

_STRUCTURE = {"ec": "equivalence class label", "GID": "local group", "ID": "record ID"}


def columns(release, pa) -> str:
    """Every column of the published table (and those never published),
    then the attributes with their role and parameter."""
    meta, frame = release.meta, release.frame
    roles = {r.attribute: r.role for r in pa.attributes.itertuples()} \
        if len(pa.attributes) else {}
    rows, attrs = [], []
    for c in frame.columns:
        if c in _STRUCTURE:
            role, word = "structure", _STRUCTURE[c]
        elif c.endswith("_bid") and c[:-4] in roles:
            role, word = "bucket", f"bucket of {c[:-4]}"
        elif c in (meta.get("pass_through") or ()):
            role, word = "other", ROLES["other"]
        else:
            role = roles.get(c, "attribute")
            word = ROLES.get(role, role)
        rows.append([c, word, "published"])
        attrs.append({"data-column": c, "data-role": role})
    for key, role in (("identifiers", "identifier"), ("dropped", "drop")):
        for c in meta.get(key) or ():
            rows.append([c, ROLES[role], "not published"])
            attrs.append({"data-column": c, "data-role": role})
    body = "<h3>Columns</h3>" + table(["column", "role", "published"], rows, row_attrs=attrs,
                                      attrs={"id": "columns"})
    if len(pa.attributes):
        A = pa.attributes
        body += "<h3>Attributes</h3>" + table(
            ["attribute", "role", "parameter", "ground",
             "cells generalized, bucketized or published"],
            [[r.attribute, ROLES.get(r.role, r.role), r.parameter, r.ground or "-",
              num(r.cells)] for r in A.itertuples()],
            row_attrs=[{"data-attribute": r.attribute, "data-role": r.role,
                        "data-cells": str(int(r.cells))} for r in A.itertuples()],
            numeric=(4,), attrs={"id": "parameters"})
    return body


def attack(pa, figs, kind: str) -> str:
    A = pa.attack
    if not len(A):
        return "<p>No sensitive attribute to attack.</p>"
    unit = "equivalence class" if kind == "msa" else "bucket"
    body = (f"<p>An adversary who knows which {unit} the victim is in (the release tells it) "
            f"guesses the value most frequent there. The bar is the share of records it gets "
            f"right; the circle what the most common value of the whole table alone gets; "
            f"the mark what the model promises for the worst {unit} (1/l, or the table's "
            f"largest share plus t / the smallest distance for t-closeness).</p>")
    rows = [{"attribute": r.attribute, "success": r.success, "prior": r.prior,
             "bound": r.bound} for r in A.itertuples()]
    svg = charts.attack_chart(figs.fid(), rows, title=f"Adversary who knows the {unit}")
    trs, attrs = [], []
    for r in A.itertuples():
        trs.append([r.attribute, num(r.cells), f"{r.success:.1%}", f"{r.worst:.1%}",
                    f"{r.prior:.1%}", "-" if math.isnan(r.bound) else f"{r.bound:.1%}",
                    r.where])
        attrs.append({"data-attribute": r.attribute, "data-success": data_value(r.success),
                      "data-worst": data_value(r.worst), "data-prior": data_value(r.prior),
                      "data-bound": data_value(r.bound)})
    return body + figure(svg, f"Success of the {unit} adversary per attribute.") + table(
        ["attribute", "cells", "success", f"worst {unit}", "prior alone", "model's bound",
         "bound from"], trs, row_attrs=attrs, numeric=range(1, 6), attrs={"id": "attack"})


def sizes(pa, figs) -> str:
    figs_html = []
    for i, (what, (s, required)) in enumerate(pa.sizes.items()):
        if i >= MAX_HISTOGRAMS:
            figs_html.append(f"<p class='note'>{len(pa.sizes) - MAX_HISTOGRAMS} more not "
                             "drawn.</p>")
            break
        one = {"classes": ("class", "classes"), "groups": ("group", "groups")}.get(
            what, ("bucket", "buckets"))
        svg = charts.size_histogram(figs.fid(), s, required, what=one[0], plural=one[1],
                                    title=f"Sizes of the {what}")
        figs_html.append(figure(svg, f"Sizes of the {what}: {num(len(s))}, smallest "
                                     f"{num(int(s.min()))}, largest {num(int(s.max()))}.",
                                attrs={"data-sizes": what, "data-count": str(len(s)),
                                       "data-min": str(int(s.min()))}))
    return "<div class='grid'>" + "".join(figs_html) + "</div>"


def utility(pa) -> str:
    items = [(k, esc(num(v)), {"data-utility": k, "data-value": data_value(v)})
             for k, v in pa.utility.items()]
    return ("<p>Information loss: how much the generalization blurs the quasi-identifiers "
            "(0: nothing; larger: coarser). Sensitive values inside classes (paper 003) are "
            "published as they are; bucketized values (paper 002) keep their bucket's "
            "distribution.</p>" + facts(items))
