"""Checks that read only a publication's metadata: no key material is
stored, and the published parameters (p_j, eta_j, l_j, k_j, t_j) are those
the declared model requires (paper 000 Sec. V-B and Theorems 2-4; paper 004
for exact QIDs; paper 001 Definition 1 for semantic tables).

Each check reports through ``add(check, attribute, status, value, expected,
message)``, the row format of :class:`anonset.audit.AuditReport`.
"""
from __future__ import annotations

import json
import math
import re
from typing import Mapping

from ..io.keys import KEY_MODES
from ..models import Anonymity, Closeness, Diversity, DiversityCloseness, model_from_dict

__all__ = ["secrets_in", "metadata_checks", "param_checks"]

_SECRET_NAMES = re.compile(r"(^|_)(key|seed|secret|nonce|password|token)($|_)", re.I)
_HEX_KEY = re.compile(r"^(0x)?[0-9a-fA-F]{32,}$")
_KEY_CHECK = re.compile(r"[0-9a-f]{16}")
#: Mappings whose keys are column names, not metadata fields.
_NAME_KEYED = ("params", "info.roles")


def secrets_in(obj, path: str = "") -> list:
    """Paths in a metadata dict that may hold key material: a field named
    key/seed/secret/nonce/password/token with a value (other than the key
    mode of ``info.key``), bytes, or a long hexadecimal string.

    Examples
    --------
    >>> secrets_in({"info": {"key": "os", "seeded": True}})
    []
    >>> secrets_in({"info": {"key": "ab" * 32}})
    ['info.key']
    >>> secrets_in({"info": {"missing": {"policy": "category", "token": "?"}}})
    []
    >>> secrets_in({"missing": {"policy": "category", "token": "NA"}})    # a partition release's
    []
    >>> secrets_in({"info": {"key_check": "d456c24f825af001"}})
    []
    >>> secrets_in({"info": {"key_check": "d456c24f825af001" * 4}})
    ['info.key_check']
    """
    found = []
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            p = f"{path}.{k}" if path else str(k)
            # documented fields whose names look secret: the key mode, the
            # missing-value token (a short printable value, never a key) and
            # a persistent key's check value (16 hex digits of a one-way
            # derivation: io.keys.key_check)
            mode = (p == "info.key" and v in KEY_MODES) or \
                (p in ("info.missing.token", "missing.token") and isinstance(v, str)
                 and len(v) < 32) or \
                (p == "info.key_check" and isinstance(v, str) and _KEY_CHECK.fullmatch(v))
            if path not in _NAME_KEYED and not mode and _SECRET_NAMES.search(str(k)) \
                    and not isinstance(v, (bool, type(None))):
                found.append(p)
            found += secrets_in(v, p)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            found += secrets_in(v, f"{path}[{i}]")
    elif isinstance(obj, (bytes, bytearray)):
        found.append(path)
    elif isinstance(obj, str) and _HEX_KEY.match(obj):
        found.append(path)
    return list(dict.fromkeys(found))


def _metadata(table) -> dict:
    return {"schema": table.schema.to_dict(),
            "params": {k: v.to_dict() for k, v in table.params.items()},
            "model": table.model, "info": table.info}


def metadata_checks(table, add) -> None:
    """No key material in the metadata; the generator is the strong one."""
    try:
        meta = json.loads(json.dumps(_metadata(table), default=repr))
    except (TypeError, ValueError) as e:        # pragma: no cover - metadata is plain JSON
        meta = {}
        add("metadata", "-", "fail", None, "JSON", f"metadata: not serializable ({e})")
    leaks = secrets_in(meta)
    add("metadata", "-", "fail" if leaks else "pass", leaks or None, "no key or seed",
        f"metadata: possible key material at {leaks}" if leaks else
        "metadata: no generator key or seed stored")
    rng = table.info.get("rng", "chacha20")
    if rng != "chacha20":
        add("metadata", "-", "warn", rng, "chacha20",
            f"metadata: generator {rng!r} is not cryptographically strong: an adversary "
            "could in principle predict the sets")


# ------------------------------------------------------------- parameters
def _model(table, add):
    """(model object, or 'semantic', or None)."""
    if (table.model or {}).get("name") == "semantic":
        return "semantic"
    try:
        model = model_from_dict(table.model) if table.model else None
    except (ValueError, KeyError, TypeError) as e:
        add("model", "-", "fail", str(table.model), "a known model", f"model: unreadable ({e})")
        return None
    if model is None:
        add("model", "-", "warn", None, "a declared model",
            "model: none declared; only set sizes, domains and metadata are checked")
    return model


def _l_or_k_problems(model, a, par, probs, notes) -> str:
    """Diversity / anonymity: the declared l (k), a clip, eta >= l, p = 1."""
    wants_l = isinstance(model, (Diversity, DiversityCloseness))
    what = "l" if wants_l else "k"
    status = "pass"
    try:
        declared = model.l_for(a.name) if wants_l else model.k_for(a.name)
    except ValueError as e:
        probs.append(str(e))
        return status
    got = par.l if wants_l else par.k
    if declared >= a.d and got == max(a.d - 1, 1):
        notes.append(f"{what} = {declared} clipped to {got} (d = {a.d}): weaker than "
                     "the model")
        status = "warn"
    elif got != declared:
        probs.append(f"params claim {what} = {got}, the model {what} = {declared}")
    eff = got if got is not None else declared
    if par.eta < eff:
        probs.append(f"eta = {par.eta} < {what} = {eff}")
    if isinstance(model, (Diversity, Anonymity)) and par.p != 1.0:
        probs.append(f"p = {par.p:.6g}, but {model.name} publishes with p = 1 (Theorems 2-3)")
    return status


def _t_problems(model, a, par, probs, notes) -> str:
    try:
        tm = model.t_for(a.name)
    except ValueError as e:
        probs.append(str(e))
        return "pass"
    if par.t is None or not math.isclose(float(par.t), tm):
        probs.append(f"params claim t = {par.t}, the model t = {tm}")
    if par.ground is None and not math.isinf(tm):
        probs.append("no ground distance recorded for t")
    elif not math.isinf(tm):
        # the ground the publisher gives the column under this model (H136:
        # 'ordered' written over a text column's 'equal' passed the audit)
        from .checks import model_grounds
        try:
            allowed = model_grounds(model, a)
        except ValueError as e:
            probs.append(str(e))
            return "pass"
        if par.ground not in allowed:
            probs.append(f"params record the ground {par.ground!r}, the model gives the "
                         f"column {allowed[0]!r}")
        elif par.ground == "ordered":
            from ..validate import check_ordered_ground
            try:
                check_ordered_ground(a, "ordered", declared_order=a.kind == "ordinal")
            except ValueError:
                # (a release of a version before 2026-11-27 named it so: t
                # holds under that order, which means little, H140)
                notes.append("ground 'ordered' over an order made by sorting its text "
                             "(t holds under that order alone; publishers refuse it now)")
                return "warn"
    return "pass"


def _semantic_problems(table, a, par, probs) -> None:
    m = table.model
    if a.name != m.get("sensitive"):
        probs.append("a semantic table randomizes only its sensitive attribute")
    elif not (par.p == 1.0 and par.eta == int(m.get("l", -1)) and par.l == par.eta):
        probs.append(f"(l, d)-semantic diversity publishes sets of l = {m.get('l')} values "
                     f"with the true value (got p = {par.p}, eta = {par.eta}, l = {par.l})")


def _expected(model, table, a, par) -> str:
    if model == "semantic":
        return f"p=1, eta=l={table.model.get('l')}"
    if isinstance(model, (Diversity, Anonymity)):
        what = "l" if isinstance(model, Diversity) else "k"
        eff = getattr(par, what) or min(model.l_for(a.name) if what == "l"
                                        else model.k_for(a.name), a.d)
        return f"p=1, eta>={what}={eff}"
    if isinstance(model, Closeness):
        return f"worst EMD <= t={model.t_for(a.name):g}"
    if isinstance(model, DiversityCloseness):
        return (f"eta>=l={par.l or min(model.l_for(a.name), a.d)}, "
                f"worst EMD <= t={model.t_for(a.name):g}")
    return ""


def param_checks(table, add) -> None:
    """The published parameters of every attribute against the declared model."""
    model = _model(table, add)
    for a in table.schema.published:
        par = table.params[a.name]
        probs, notes = [], []
        if par.d != a.d:
            probs.append(f"params say d = {par.d}, the domain has {a.d} values")
        if not 1 <= par.eta <= a.d:
            probs.append(f"eta = {par.eta} outside [1, d = {a.d}]")
        if not 0.0 <= par.p <= 1.0:
            probs.append(f"p = {par.p} outside [0, 1]")
        value = f"p={par.p:.6g}, eta={par.eta}"
        if a.role == "exact":
            if not (par.exact and par.p == 1.0 and par.eta == 1):
                probs.append(f"exact QID must have p = 1, eta = 1 (got p = {par.p}, "
                             f"eta = {par.eta})")
            add("parameters", a.name, "fail" if probs else "pass", value, "p=1, eta=1",
                f"{a.name}: " + ("; ".join(probs) if probs else "exact QID, published as is"))
            continue
        if par.exact:
            probs.append("a sensitive QID is marked exact")
        status = "pass"
        if model == "semantic":
            _semantic_problems(table, a, par, probs)
        elif model is not None:
            if isinstance(model, (Diversity, DiversityCloseness, Anonymity)):
                status = _l_or_k_problems(model, a, par, probs, notes)
            if isinstance(model, (Closeness, DiversityCloseness)):
                if _t_problems(model, a, par, probs, notes) == "warn":
                    status = "warn"
        msg = f"{a.name}: " + "; ".join(probs + notes) if (probs or notes) else \
            f"{a.name}: p = {par.p:.6g}, eta = {par.eta} consistent with the model"
        add("parameters", a.name, "fail" if probs else status, value,
            _expected(model, table, a, par), msg)
