"""The audit report: every check that the available information allows
-- the published table alone (what an analyst can verify), or the table and
the original data (what the data holder can verify) -- with the attack
simulation on request (papers 000 and 004)."""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from ..models import Anonymity, Closeness, Diversity, DiversityCloseness, model_from_dict
from ..randomized.closeness_search import worst_emd
from ..randomized.params import ground_object
from ..randomized.settable import SetTable
from .attack import AttackResult, attack as _run_attack
from .checks import (_TOL, CheckResult, _codes_of, _declared, _record_classes, _sizes,
                     _stray_bits, check_anonymity, check_closeness, check_diversity, membership)

__all__ = ["AuditReport", "audit"]


@dataclass
class AuditReport:
    """Outcome of :func:`audit`.

    Attributes
    ----------
    checks : DataFrame
        One row per check: check, attribute, status ('pass', 'fail', 'warn',
        'info', 'unverified'), value, expected, message.
    diversity, anonymity, closeness : CheckResult or None
    classes : DataFrame or None
        Data holder only: exact diversity of the equivalence classes keyed by
        sampled records' true values.
    attack : AttackResult or None
    with_data : bool
    """

    checks: pd.DataFrame
    diversity: CheckResult | None = None
    anonymity: CheckResult | None = None
    closeness: CheckResult | None = None
    classes: pd.DataFrame | None = None
    attack: AttackResult | None = None
    with_data: bool = False

    @property
    def ok(self) -> bool:
        """True when no check failed ('warn' and 'unverified' do not fail)."""
        return not bool((self.checks["status"] == "fail").any())

    @property
    def failures(self) -> list:
        return self.checks.loc[self.checks["status"] == "fail", "message"].tolist()

    def to_frame(self) -> pd.DataFrame:
        return self.checks.copy()

    def to_text(self) -> str:
        lines = [f"anonset audit ({'with the original data' if self.with_data else 'published table only'}):"
                 f" {'PASSED' if self.ok else 'FAILED'}"]
        for st in ("fail", "warn", "unverified"):
            for m in self.checks.loc[self.checks["status"] == st, "message"]:
                lines.append(f"  {st.upper():10s} {m}")
        counts = self.checks["status"].value_counts()
        lines.append("  checks: " + ", ".join(f"{int(v)} {k}" for k, v in counts.items()))
        with pd.option_context("display.width", 160, "display.max_columns", 30,
                               "display.float_format", "{:.4g}".format):
            lines.append("")
            lines.append(self.checks[["check", "attribute", "status", "value", "expected"]]
                         .to_string(index=False))
            if self.attack is not None and len(self.attack.summary):
                cols = ["attribute", "l", "promise_1_over_l", "victims", "conf_mean", "conf_q50",
                        "conf_q90", "conf_q99", "conf_max", "share_above_1_over_l", "accuracy",
                        "prior_accuracy", "emd_max", "t"]
                lines.append("")
                s = self.attack.settings
                lines.append(f"attack: Bayes adversary knowing {s['known']} attribute(s), "
                             f"{s['prior']} prior ({s['prior_source']}), {s['n_targets']} victims")
                lines.append(self.attack.summary[cols].to_string(index=False))
        return "\n".join(lines)

    def __str__(self):
        return self.to_text()

    def plot(self, path=None, ax=None):
        """The attack's confidence plot (see :meth:`AttackResult.plot`)."""
        if self.attack is None:
            raise ValueError("no attack simulation in this report: run audit(..., attack=True)")
        return self.attack.plot(path=path, ax=ax)


_SECRET_NAMES = re.compile(r"(^|_)(key|seed|secret|nonce|password|token)($|_)", re.I)
_HEX_KEY = re.compile(r"^(0x)?[0-9a-fA-F]{32,}$")


def _secrets_in(obj, path="") -> list:
    found = []
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            p = f"{path}.{k}" if path else str(k)
            if _SECRET_NAMES.search(str(k)) and not isinstance(v, (bool, type(None))):
                found.append(p)
            found += _secrets_in(v, p)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            found += _secrets_in(v, f"{path}[{i}]")
    elif isinstance(obj, (bytes, bytearray)):
        found.append(path)
    elif isinstance(obj, str) and _HEX_KEY.match(obj):
        found.append(path)
    return found


def _param_checks(table: SetTable, add) -> None:
    """The published parameters against the declared model."""
    try:
        model = model_from_dict(table.model) if table.model else None
    except (ValueError, KeyError, TypeError) as e:
        add("model", "-", "fail", table.model, "a known model", f"model: unreadable ({e})")
        model = None
    if model is None:
        add("model", "-", "warn", None, "a declared model",
            "model: none declared; only set sizes, domains and metadata are checked")
    for a in table.schema.published:
        name, par = a.name, table.params[a.name]
        probs = []
        if par.d != a.d:
            probs.append(f"params say d = {par.d}, the domain has {a.d} values")
        if not 1 <= par.eta <= a.d:
            probs.append(f"eta = {par.eta} outside [1, d = {a.d}]")
        if not 0.0 <= par.p <= 1.0:
            probs.append(f"p = {par.p} outside [0, 1]")
        if a.role == "exact":
            if not (par.exact and par.p == 1.0 and par.eta == 1):
                probs.append(f"exact QID must have p = 1, eta = 1 (got p = {par.p}, eta = {par.eta})")
            add("parameters", name, "fail" if probs else "pass", f"p={par.p:.6g}, eta={par.eta}",
                "p=1, eta=1", f"{name}: " + ("; ".join(probs) if probs else "exact QID, published as is"))
            continue
        if par.exact:
            probs.append("a sensitive QID is marked exact")
        notes = []
        status = "pass"
        if model is not None:
            wants_l = isinstance(model, (Diversity, DiversityCloseness))
            wants_k = isinstance(model, Anonymity)
            wants_t = isinstance(model, (Closeness, DiversityCloseness))
            if wants_l or wants_k:
                what = "l" if wants_l else "k"
                try:
                    declared = model.l_for(name) if wants_l else model.k_for(name)
                except ValueError as e:
                    declared = None
                    probs.append(str(e))
                got = par.l if wants_l else par.k
                if declared is not None:
                    clipped = declared >= a.d and got == max(a.d - 1, 1)
                    if clipped:
                        notes.append(f"{what} = {declared} clipped to {got} (d = {a.d}, clip_l): "
                                     f"weaker than the model")
                        status = "warn"
                    elif got != declared:
                        probs.append(f"params claim {what} = {got}, the model {what} = {declared}")
                    eff = got if got is not None else declared
                    if par.eta < eff:
                        probs.append(f"eta = {par.eta} < {what} = {eff}")
                    if isinstance(model, (Diversity, Anonymity)) and par.p != 1.0:
                        probs.append(f"p = {par.p:.6g}, but {model.name} publishes with p = 1 "
                                     "(Theorems 2-3)")
            if wants_t:
                try:
                    tm = model.t_for(name)
                except ValueError as e:
                    tm = None
                    probs.append(str(e))
                if tm is not None and (par.t is None or not math.isclose(float(par.t), tm)):
                    probs.append(f"params claim t = {par.t}, the model t = {tm}")
                if par.ground is None and tm is not None and not math.isinf(tm):
                    probs.append("no ground distance recorded for t")
        msg = f"{name}: " + "; ".join(probs + notes) if (probs or notes) else \
            f"{name}: p = {par.p:.6g}, eta = {par.eta} consistent with the model"
        add("parameters", name, "fail" if probs else status, f"p={par.p:.6g}, eta={par.eta}",
            _expected_params(model, name, a, par), msg)


def _expected_params(model, name, a, par) -> str:
    if isinstance(model, (Diversity, Anonymity)):
        what = "l" if isinstance(model, Diversity) else "k"
        eff = getattr(par, what) or min(model.l_for(name) if what == "l" else model.k_for(name), a.d)
        return f"p=1, eta>={what}={eff}"
    if isinstance(model, Closeness):
        return f"worst EMD <= t={model.t_for(name):g}"
    if isinstance(model, DiversityCloseness):
        return f"eta>=l={par.l or min(model.l_for(name), a.d)}, worst EMD <= t={model.t_for(name):g}"
    return ""


def audit(table: SetTable, original=None, *, schema=None, attack: bool = False, known=1,
          n_targets: int | None = 10_000, n_classes: int = 200, prior: str = "marginal",
          z_max: float = 4.0, closeness_margin: float = 0.01, seed=None) -> AuditReport:
    """Audit a published table against its declared privacy model.

    Without ``original`` (what anyone holding the table can verify):

    * metadata: no generator key or seed value is stored;
    * domains: every set lies in its declared domain; inferred domains are
      flagged (they reveal which values occur);
    * set sizes: every set of S_j has exactly eta_j values;
    * parameters: consistent with the model (diversity/anonymity: p = 1,
      eta >= l; closeness: the declared t and ground);
    * (l_j)-diversity and (k_j)-anonymity, proven from the set sizes;
    * closeness: proven where the bound valid for every distribution A holds;
      otherwise 'unverified', with an estimate from the reconstructed A_j
      ('warn' when it exceeds t_j by more than ``closeness_margin``).  A_j
      itself cannot be known without the data.

    With ``original`` (the data holder; rows in publishing order), also:

    * the rate at which the true value is in its set matches
      p_j + (1 - p_j) eta_j / d_j (binomial z-score, fail beyond ``z_max``;
      with p_j = 1 every set must hold its true value);
    * diversity of the equivalence classes for S_j keyed by the true values
      of ``n_classes`` sampled records (exact per class; Theorems 2-3);
    * closeness with the true A_j (Theorem 4).

    ``attack=True`` adds :func:`attack` (``known``, ``n_targets``, ``prior``).

    Returns
    -------
    AuditReport
        ``ok`` is False when any check fails; every failing message names the
        attribute.

    Examples
    --------
    >>> import pandas as pd, anonset
    >>> df = pd.DataFrame({"a": list("xyzxyzxw"), "b": list("uvwuvwuv")})
    >>> pub = anonset.publish(df, anonset.Diversity(2), seed=3)
    >>> rep = audit(pub, df, attack=True, n_targets=None, seed=0)
    >>> rep.ok, sorted(rep.attack.summary["attribute"])
    (True, ['a', 'b'])
    """
    if not isinstance(table, SetTable):
        raise ValueError(f"table must be a SetTable, got {type(table).__name__}")
    rows = []

    def add(check, attribute, status, value, expected, message):
        rows.append({"check": check, "attribute": attribute, "status": status,
                     "value": value, "expected": expected, "message": message})

    # --- metadata
    try:
        meta = json.loads(json.dumps(table.metadata(), default=repr))
    except (TypeError, ValueError) as e:        # pragma: no cover - metadata is plain JSON
        meta = {}
        add("metadata", "-", "fail", None, "JSON", f"metadata: not serializable ({e})")
    leaks = _secrets_in(meta)
    add("metadata", "-", "fail" if leaks else "pass", leaks or None, "no key or seed",
        f"metadata: possible key material at {leaks}" if leaks else
        "metadata: no generator key or seed stored")
    if table.info.get("seeded"):
        add("metadata", "-", "warn", "seeded", "fresh OS key",
            "metadata: published from a user seed; the seed determines every set and must be "
            "kept as secret as the data")
    if table.info.get("rng", "chacha20") != "chacha20":
        add("metadata", "-", "warn", table.info.get("rng"), "chacha20",
            f"metadata: generator {table.info.get('rng')!r} is not cryptographically strong")

    # --- domains and set sizes
    Ms = {}
    for a in table.schema.published:
        name, par = a.name, table.params[a.name]
        stray = _stray_bits(table, name)
        if stray:
            add("domain", name, "fail", stray, 0, f"{name}: {stray} set(s) hold values outside "
                f"the domain of {a.d} values")
        elif a.inferred:
            add("domain", name, "warn", "inferred", "declared", f"{name}: the domain was inferred "
                "from the data, so it reveals which values occur (declare it)")
        else:
            add("domain", name, "pass", a.d, a.d, f"{name}: declared domain of {a.d} values")
        Ms[name] = membership(table, name)
        sz = _sizes(Ms[name])
        bad = np.flatnonzero(sz != par.eta)
        if bad.size:
            add("set_size", name, "fail", f"{bad.size} rows", f"|R|={par.eta}",
                f"{name}: {bad.size} set(s) do not have eta = {par.eta} values (first at row "
                f"{int(bad[0])}, size {int(sz[bad[0]])})")
        else:
            add("set_size", name, "pass", par.eta, par.eta,
                f"{name}: all {table.n_rows} sets have eta = {par.eta} values")

    # --- parameters against the model
    _param_checks(table, add)

    # --- diversity / anonymity (proofs from set sizes; exact when small)
    div = an = None
    if any(table.params[n].l is not None for n in table.names):
        measure = table.model.get("measure", "frequency") if table.model else "frequency"
        div = check_diversity(table, measure=measure, n_classes=n_classes, seed=seed)
        for r in div.report.itertuples():
            if r.l is None or (isinstance(r.l, float) and math.isnan(r.l)):
                continue
            add("diversity", r.attribute, "pass" if r.ok else "fail", r.bound_l, r.l, r.message)
    if any(_declared(table, n, "k") not in (None, 1) for n in table.names if not table.params[n].exact):
        an = check_anonymity(table, n_classes=n_classes, seed=seed)
        for r in an.report.itertuples():
            if r.k is None or (isinstance(r.k, float) and math.isnan(r.k)):
                continue
            add("anonymity", r.attribute, "pass" if r.ok else "fail", r.bound_k, r.k, r.message)

    # --- closeness
    clo = None
    has_t = any(table.params[n].t is not None and not math.isinf(float(table.params[n].t))
                for n in table.names if not table.params[n].exact)
    codes = _codes_of(original, table, schema) if original is not None else None
    if has_t:
        clo = check_closeness(table, A={n: np.bincount(c, minlength=table.schema[n].d)
                                        for n, c in codes.items()} if codes is not None else None)
        for r in clo.report.itertuples():
            if codes is not None:
                add("closeness", r.attribute, r.status, r.worst_emd, r.t, r.message)
                continue
            if r.status == "pass":
                add("closeness", r.attribute, "pass", r.bound_any_A, r.t, r.message)
                continue
            # estimate A_j from the published table (EM); an estimate, not a proof
            from ..randomized.reconstruct import reconstruct
            Ah = np.clip(np.asarray(reconstruct(table, [r.attribute], "em").counts, float), 0, None)
            g = ground_object(r.ground, table.schema[r.attribute])
            est = worst_emd(Ah / Ah.sum(), r.eta, r.p, g).value
            st = "warn" if est > r.t + closeness_margin else "unverified"
            add("closeness", r.attribute, st, est, r.t,
                f"{r.attribute}: not verifiable without A_{r.attribute}; with A estimated from "
                f"the published table the worst EMD is {est:.4g} (t = {r.t:g}); "
                f"the bound for every A is {r.bound_any_A:.4g}")

    # --- data holder checks
    classes = None
    if codes is not None:
        n = table.n_rows
        add("rows", "-", "pass", n, n, f"original has the {n} published rows")
        for name in table.names:
            par = table.params[name]
            c = codes[name]
            hit = int(Ms[name][np.arange(n), c].sum())
            pi = par.inclusion
            if pi >= 1.0:
                st = "pass" if hit == n else "fail"
                msg = (f"{name}: every set holds its true value" if hit == n else
                       f"{name}: {n - hit} set(s) miss their true value although p = 1")
                add("inclusion", name, st, hit / n, 1.0, msg)
                continue
            z = (hit - n * pi) / math.sqrt(n * pi * (1.0 - pi))
            st = "pass" if abs(z) <= z_max else "fail"
            add("inclusion", name, st, hit / n, pi,
                f"{name}: true value in its set for {hit / n:.4f} of the rows, expected "
                f"p + (1-p) eta/d = {pi:.4f} (z = {z:+.2f}{'' if st == 'pass' else f', |z| > {z_max:g}'})")
        classes = _record_classes(table, codes, n_classes, seed)
        for r in classes.itertuples():
            if r.l is None or (isinstance(r.l, float) and math.isnan(r.l)):
                continue
            ok = r.max_freq <= 1.0 / r.l + _TOL
            add("classes", r.attribute, "pass" if ok else "fail", r.max_freq, 1.0 / r.l,
                f"{r.attribute}: in the classes of {r.classes} sampled records the largest share of "
                f"one value is {r.max_freq:.4f} (1/l = {1.0 / r.l:.4f}); the true value's "
                f"largest share {r.max_true_share:.4f}")

    att = None
    if attack:
        att = _run_attack(table, original, known=known, n_targets=n_targets,
                                  prior=prior, seed=seed, schema=schema)
        for r in att.summary.itertuples():
            above = "" if not r.l else f", {r.share_above_1_over_l:.1%} of victims above 1/l = {r.promise_1_over_l:.3g}"
            acc = "" if math.isnan(r.accuracy) else f", accuracy {r.accuracy:.3f} (prior alone {r.prior_accuracy:.3f})"
            add("attack", r.attribute, "info", r.conf_mean, r.promise_1_over_l,
                f"{r.attribute}: Bayes adversary's confidence mean {r.conf_mean:.3f}, median "
                f"{r.conf_q50:.3f}, max {r.conf_max:.3f}{above}{acc}")
            if r.t is not None and not (isinstance(r.t, float) and math.isnan(r.t)) \
                    and prior == "marginal" and att.settings["prior_source"] == "true":
                ok = r.emd_max <= r.t + _TOL
                add("attack_closeness", r.attribute, "pass" if ok else "fail", r.emd_max, r.t,
                    f"{r.attribute}: largest EMD(A, posterior) over the victims {r.emd_max:.4g} "
                    f"{'<=' if ok else '>'} t = {r.t:g}")
    return AuditReport(pd.DataFrame(rows, columns=["check", "attribute", "status", "value",
                                                   "expected", "message"]),
                       div, an, clo, classes, att, original is not None)


