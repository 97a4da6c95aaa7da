"""Sections of the release report for randomized releases (papers 000, 004,
001): the parameters of every attribute, the attack simulation of paper 000
Sec. V-C3 as a chart, the local differential privacy epsilon of each
attribute (:mod:`anonset.audit.ldp`), and utility: reconstructed pairs as
heat maps and marginals as bar charts, with each method's error against the
truth (paper 000 eq. 4 and 6)."""
from __future__ import annotations

import math

import numpy as np

from ..attack import SUMMARY_COLUMNS
from . import charts
from .page import data_value, esc, figure, num, records, table

__all__ = ["parameters", "attack", "ldp", "utility"]


def parameters(release, eps) -> str:
    """One row per published attribute: d, l, k, t, p, eta, ground, epsilon."""
    header = release.header
    e = {} if eps is None else dict(zip(eps["attribute"], eps["epsilon"]))
    rows, attrs = [], []
    for n in header.names:
        par = header.params[n]
        rows.append([n, "exact" if par.exact else "randomized", num(par.d), num(par.l),
                     num(par.k), num(par.t), num(float(par.p)), num(par.eta), par.ground or "-",
                     num(e.get(n)) if n in e else "-"])
        attrs.append({"data-attribute": n, "data-d": data_value(par.d),
                      "data-l": data_value(par.l), "data-k": data_value(par.k),
                      "data-t": data_value(par.t), "data-p": data_value(par.p),
                      "data-eta": data_value(par.eta), "data-ground": par.ground or "",
                      "data-epsilon": data_value(e.get(n))})
    return ("<h3>Parameters of each attribute</h3><p class='note'>p: probability that the "
            "set is drawn around the true value; eta: values per set; d: values in the "
            "domain; l, k, t: what the model asks of the attribute; ground: the distance "
            "of t; epsilon: local differential privacy of its sets.</p>"
            + table(["attribute", "published", "d", "l", "k", "t", "p", "eta", "ground",
                     "epsilon"], rows, row_attrs=attrs, numeric=range(2, 10),
                    attrs={"id": "parameters"}))


def attack(report, figs) -> str:
    att = report.attack
    if att is None or not len(att.summary):
        return "<p>The attack simulation was not run (run the report with the attack on).</p>"
    s = att.settings
    S = att.summary
    body = (f"<p>A Bayesian adversary has found each victim's published row and knows "
            f"{esc(s['known'])} of the victim's attributes exactly; it knows the published "
            f"parameters and the population's distribution ({esc(s['prior'])} prior, "
            f"{esc(s['prior_source'])}), and guesses each other attribute's most likely "
            f"value. {num(s['n_targets'])} victims. The bar is how often it is right; the "
            f"circle how often a guess from the prior alone is right; the mark is what the "
            f"privacy model promises the adversary cannot beat.</p>")
    if not bool(S["success_measured"].all()):
        why = ("the rows were published in a random order, so the original cannot be lined "
               "up with them" if report.with_data else "without the original data the true "
               "values are unknown")
        body += (f"<p class='note'>Here {why}: the success shown is the adversary's mean "
                 "confidence in its guesses, an estimate.</p>")
    rows = [{"attribute": r.attribute, "success": r.success, "prior": r.prior_only,
             "bound": r.model_bound} for r in S.itertuples()]
    svg = charts.attack_chart(figs.fid(), rows, title="Bayesian adversary, per attribute")
    trs, attrs = [], []
    for r in S.itertuples():
        trs.append([r.attribute, num(r.victims), f"{r.success:.1%}", f"{r.prior_only:.1%}",
                    "-" if math.isnan(r.model_bound) else f"{r.model_bound:.1%}", r.bound,
                    f"{r.conf_mean:.1%}", f"{r.conf_max:.1%}",
                    "-" if math.isnan(r.above_bound) else f"{r.above_bound:.1%}",
                    "RISK" if r.risk else "no"])
        attrs.append({"data-attribute": r.attribute, "data-success": data_value(r.success),
                      "data-prior": data_value(r.prior_only),
                      "data-bound": data_value(r.model_bound), "data-risk":
                      data_value(bool(r.risk)), "data-victims": data_value(r.victims)})
    tab = table(["attribute", "victims", "success", "prior alone", "model's bound",
                 "bound from", "confidence mean", "confidence max", "above bound", "risk"],
                # 'bound from' is a formula in words: it wraps (as on the
                # partition page), never held on one line past the page (H127)
                trs, row_attrs=attrs, numeric=(1, 2, 3, 4, 6, 7, 8), attrs={"id": "attack"})
    # the glossary under the table's own headers (the attack's summary
    # columns that the table shows, by the names it shows them)
    shown = {"attribute": "attribute", "victims": "victims", "success": "success",
             "prior alone": "prior_only", "model's bound": "model_bound",
             "bound from": "bound", "confidence mean": "conf_mean",
             "confidence max": "conf_max", "above bound": "above_bound", "risk": "risk"}
    gloss = "".join(f"<dt>{esc(k)}</dt><dd>{esc(SUMMARY_COLUMNS[v])}</dd>"
                    for k, v in shown.items())
    return (body + figure(svg, "Success rate of the simulated adversary per attribute, with "
                                "the prior alone and the model's bound.")
            + tab + f"<details><summary>the columns in words</summary><dl class='facts'>"
                    f"{gloss}</dl></details>")


def ldp(report) -> str:
    eps = report.epsilon
    if eps is None or not len(eps):
        return "<p>No randomized attribute: local differential privacy does not apply.</p>"
    rows, attrs = [], []
    for r in eps.itertuples():
        e = float(r.epsilon)
        rows.append([r.attribute, r.mechanism, num(r.p), num(r.eta), num(r.d), num(e),
                     "infinite" if math.isinf(e) else num(math.exp(e)), r.note])
        attrs.append({"data-attribute": r.attribute, "data-epsilon": data_value(e),
                      "data-p": data_value(r.p), "data-eta": data_value(r.eta)})
    finite = [r for r in eps.itertuples() if r.attribute != "record" and math.isfinite(r.epsilon)]
    text = ("<p>A mechanism is epsilon-differentially private (locally) when any published "
            "set is at most e<sup>epsilon</sup> times likelier under one true value than "
            "under another. ")
    text += ("Every randomized attribute here has a finite epsilon; a record's epsilon is "
             "the sum over its attributes.</p>" if len(finite) == len(eps) - 1 else
             "An infinite epsilon means no such guarantee: with p = 1 (every diversity and "
             "anonymity model, and paper 001) the true value is always in its set, so a set "
             "that leaves a value out rules it out. Those models bound the share of a value "
             "in a group instead (the checks above).</p>")
    return text + table(["attribute", "mechanism", "p", "eta", "d", "epsilon", "e^epsilon",
                         "in words"], rows, row_attrs=attrs, numeric=range(2, 7),
                        attrs={"id": "ldp"})


# ------------------------------------------------------------------ utility
def _metrics_table(tabs, key: str) -> str:
    rows, attrs = [], []
    for t in tabs:
        name = ":".join(t.attributes)
        for m, ct in t.estimates.items():
            mt = t.metrics.get(m)
            it = ct.info.get("iterations")
            rows.append([" x ".join(t.attributes), m] +
                        ([num(mt["L1"]), f"{mt['L1/N']:.2%}", num(mt["Hellinger"])]
                         if mt else ["-", "-", "-"]) + ["-" if it is None else num(it)])
            attrs.append({f"data-{key}": name, "data-method": m,
                          "data-l1": data_value(mt["L1"]) if mt else "",
                          "data-hellinger": data_value(mt["Hellinger"]) if mt else ""})
    return table(["attributes", "method", "L1 (records)", "L1 / N", "Hellinger", "iterations"],
                 rows, row_attrs=attrs, numeric=(2, 3, 4, 5), attrs={"class": "metrics"})


def _ordered(release, a: str) -> bool:
    return release.header.schema[a].kind == "ordinal"


def _numbers(labels, series) -> str:
    return table(["value"] + [n for n, _ in series],
                 [[lab] + [records(float(v[i])) for _, v in series] for i, lab in enumerate(labels)],
                 numeric=range(1, len(series) + 1))


def _pair(release, tab, figs, top: int) -> str:
    a, b = tab.attributes
    dom = [release.header.schema[x].domain for x in (a, b)]
    first = next(iter(tab.estimates))
    est = tab.estimates[first]
    truth = None if tab.truth is None else tab.truth.counts
    svg = charts.heatmaps(figs.fid(), (a, b), dom[0], dom[1], est.counts, first, truth,
                          top=min(top, 12), ordered=(_ordered(release, a), _ordered(release, b)))
    ref = truth if truth is not None else est.counts
    rg = charts.top_groups(ref.sum(axis=1), min(top, 12), _ordered(release, a))
    rl = charts.group_labels(dom[0], rg)
    cg = charts.top_groups(ref.sum(axis=0), min(top, 12), _ordered(release, b))
    cl = charts.group_labels(dom[1], cg)
    mats = ([("true", truth)] if truth is not None else []) + [(first, est.counts)]
    data = ""
    for name, M in mats:
        R = np.array([[M[np.ix_(r, c)].sum() for c in cg] for r in rg])
        data += (f"<p>{esc(name)} ({esc(a)} down, {esc(b)} across)</p>" +
                 table([f"{a} \\ {b}"] + cl, [[rl[i]] + [records(float(x)) for x in R[i]]
                                            for i in range(len(rl))],
                       numeric=range(1, len(cl) + 1)))
    return (f"<h3>{esc(a)} x {esc(b)}</h3>" + _metrics_table([tab], "pair")
            + figure(svg, f"{a} by {b}: " + ("true counts, the " if truth is not None else "the ")
                     + f"{first} reconstruction" + (" and its error" if truth is not None
                                                    else "") + ".", data,
                     attrs={"data-pair": f"{a}:{b}"}))


def _marginal(release, tab, figs, top: int) -> str:
    (a,) = tab.attributes
    dom = release.header.schema[a].domain
    series = ([("true", tab.truth.counts)] if tab.truth is not None else []) + \
        [(m, ct.counts) for m, ct in tab.estimates.items()]
    svg = charts.marginal_bars(figs.fid(), a, dom, series, top=top,
                               ordered=_ordered(release, a))
    labs, vals = charts.top_k(dom, [v for _, v in series], top, _ordered(release, a))
    return figure(svg, f"{a}: " + ", ".join(n for n, _ in series) + " counts of each value.",
                  _numbers(labs, list(zip([n for n, _ in series], vals))),
                  attrs={"data-marginal": a})


def utility(release, util, figs, top: int) -> str:
    if util is None:
        return "<p>Utility was not computed.</p>"
    with_truth = any(t.truth is not None for t in util.pairs + util.marginals)
    body = ("<p>What an analyst reconstructs from the published sets, next to the true "
            "counts of the original data. L1 is the sum of the absolute errors over all "
            "cells (paper 000 eq. 4), in records; Hellinger (eq. 6) is 0 for a perfect "
            "estimate.</p>" if with_truth else
            "<p>Without the original data only the reconstructions are shown: give the "
            "original to compare them with the true counts.</p>")
    body += "".join(f"<p class='note'>{esc(n)}</p>" for n in util.notes)
    for tab in util.pairs:
        body += _pair(release, tab, figs, top)
    if util.marginals:
        body += "<h3>Marginals</h3>"
        if with_truth:
            body += _metrics_table(util.marginals, "marginal")
        body += "<div class='grid'>" + "".join(_marginal(release, tab, figs, top)
                                               for tab in util.marginals) + "</div>"
    return body

