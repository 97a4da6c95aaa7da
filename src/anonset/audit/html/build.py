""":func:`report`: the release report, from the release to the written
page -- read the release (:mod:`.release`), audit it (:func:`anonset.audit`
in memory, :func:`anonset.audit_file` chunk by chunk, or
:func:`anonset.audit.partition.audit_partition`), reconstruct what the
analyst will see (:mod:`.utility`), draw, and write one HTML file
atomically."""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, Callable, Sequence

import pandas as pd

from ..._typing import PathLike, TableLike
from ...validate import InputError, check_int
from . import partition as P
from . import randomized as R
from .page import document
from .release import open_release
from .sections import Figures, checks, glance, reproduce, verdict

__all__ = ["report", "Page"]


#: Shown on a page made with the original data.
CONFIDENTIAL = ("Confidential: this page holds statistics of the original data (true counts, "
                "some of them small: a count of 1 beside a value published exactly gives that "
                "person's true value). Keep it as secret as the data itself; a report made "
                "without the original shows only what the release shows.")


@dataclass
class Page:
    """What :func:`report` made: the page and its headline facts."""

    html: str
    verdict: str
    kind: str
    rows: int
    path: Path | None = None

    def __str__(self) -> str:
        return self.html


class Steps:
    """Progress in stages: ``progress(n)`` per rows (or steps) done, and
    ``progress.stage(desc, total)`` where the callable has it (the CLI's
    :class:`~anonset.cli.progress.Progress`)."""

    def __init__(self, progress):
        self.progress = progress

    def stage(self, desc: str, total=None) -> None:
        if hasattr(self.progress, "stage"):
            self.progress.stage(desc, total)

    def __call__(self, n: int = 1) -> None:
        if self.progress is not None:
            self.progress(n)


def _original_frame(original, fmt, declared=None):
    """The original as a DataFrame (typed as the engine types CSV text; a
    value of a published domain that reads as a missing marker, 'NA' for
    North America, a value: H139)."""
    if original is None or isinstance(original, pd.DataFrame):
        return original
    from ...io.tables import as_frame, check_input_file, file_format, read_typed
    if not isinstance(original, (str, Path)):
        return as_frame(original, param="original")
    path = check_input_file(original, param="original")
    return read_typed(path, file_format(path, fmt, param="original_format"), declared=declared)


def _name(x, what: str) -> str:
    # the file's name only: a page passed around for sign-off named its
    # maker's folders (/home/jsmith/hiv-cohort-2026/..., H38)
    return shlex.quote(Path(x).name) if isinstance(x, (str, Path)) else f"<{what}>"


def _options(opts: dict, keys) -> list:
    """Command-line options of ``keys`` whose value is not the default."""
    table = {"known": ("--known", 1), "n_targets": ("--targets", 10_000),
             "seed": ("--seed", None), "top": ("--top", 15),
             "chunk_given": ("--chunk-rows", None)}
    out = []
    for key in keys:
        flag, default = table[key]
        if opts[key] != default:
            out += [flag, str(opts[key])]
    return out


def _commands(rel, published, original, opts, output) -> list:
    """The command lines that make this report, and the same audit, again
    (options that differ from the defaults only)."""
    pub_name = _name(published, "published")
    orig_name = _name(original, "original") if original is not None else None
    if orig_name is not None and orig_name == pub_name and isinstance(original, (str, Path)):
        # two files of one name (public/wave1.csv, private/wave1.csv): each
        # by its path from the report's folder (H41)
        import os
        base = Path(output).resolve().parent if output is not None else Path.cwd()
        pub_name, orig_name = (shlex.quote(os.path.relpath(Path(p).resolve(), base))
                               for p in (published, original))
    orig = ["--original", orig_name] if original is not None else []
    parts = ["anonset report", pub_name] + orig
    pairs = opts["pairs"]
    if pairs:
        parts += ["--pairs", pairs if isinstance(pairs, str) else
                  ",".join(":".join(p) for p in pairs)]
    if opts["methods"]:
        parts += ["--methods", ",".join(opts["methods"])]
    parts += _options(opts, ("known", "n_targets", "seed", "top", "chunk_given"))
    if not opts["attack"]:
        parts.append("--no-attack")
    cmds = [" ".join(parts + ["-o", _name(output or "report.html", "output")])]
    if rel.path is not None:
        audit = ["anonset audit", pub_name] + orig
        if rel.randomized:
            if opts["attack"]:
                audit += ["--attack"] + _options(opts, ("known", "n_targets"))
            audit += _options(opts, ("seed", "chunk_given"))
        # an lgb / msa release: its audit takes no option but --original
        # (its class adversary always runs), and makes the page's checks (H127)
        cmds.append(" ".join(audit))
    return cmds


def _versions() -> dict:
    import matplotlib
    import numpy as np
    from ..._version import __version__
    return {"anonset": __version__, "numpy": np.__version__, "pandas": pd.__version__,
            "matplotlib": matplotlib.__version__}


def _set_sections(rel, original, opts, steps, figs) -> tuple:
    from ..file import audit_file
    from ..report import audit
    from .utility import check_methods, default_pairs, parse_pairs, set_utility
    opts["methods"] = check_methods(opts["methods"], rel.semantic_attribute is not None)
    pairs = parse_pairs(opts["pairs"], rel.header, rel.semantic_attribute) \
        if opts["pairs"] is not None else default_pairs(rel.header, rel.semantic_attribute)
    known = opts["known"]
    n_sens = sum(not rel.header.params[n].exact for n in rel.header.names)
    if isinstance(known, int) and not isinstance(known, bool):
        top = max(n_sens - 1, 0)
        if known > top and known != 1:
            # as the audit refuses it (the page said the adversary knew fewer)
            from ...validate import InputError
            raise InputError(f"got {known}", param="known",
                             expected=f"a list of attributes or an int in [0, {top}]")
        known = min(known, top)                     # one sensitive attribute: nothing known
        opts["known"] = known                       # (and so the commands to reproduce say)
    common = dict(attack=opts["attack"] and n_sens > 0, known=known,
                  n_targets=opts["n_targets"], seed=opts["seed"])
    if rel.streamed:
        steps.stage("auditing", rel.n_rows)        # a second pass, where needed, goes beyond
        rep = audit_file(rel.path, original, chunk_rows=opts["chunk_rows"], format=rel.fmt,
                         original_format=opts["original_format"], progress=steps, **common)
    else:
        steps.stage("auditing", None)
        rep = audit(rel.table, original, **common)
    if rel.path is not None:            # the file's own columns, against its metadata
        from ..columns import with_column_check
        rep = with_column_check(rep, rel.path, rel.fmt, rel.meta)
    util = set_utility(rel, original, pairs, chunk_rows=opts["chunk_rows"],
                       methods=opts["methods"], steps=steps)
    steps.stage("drawing (figures)", None)
    sections = [("glance", "The release at a glance",
                 glance(rel, _versions()["anonset"], R.parameters(rel, rep.epsilon))),
                ("verdict", "Privacy verdict", verdict(rep)),
                ("checks", "Every check", checks(rep)),
                ("attack", "Attack simulation", R.attack(rep, figs)),
                ("ldp", "Local differential privacy", R.ldp(rep)),
                ("utility", "Utility: what the analyst will see",
                 R.utility(rel, util, figs, opts["top"]))]
    return sections, rep


def _partition_sections(rel, original, opts, steps, figs) -> tuple:
    from ..partition import audit_partition
    steps.stage("auditing", None)
    pa = audit_partition(rel, original)
    if rel.path is not None:            # the file's own columns, against its metadata
        import dataclasses
        from ..columns import with_column_check
        pa = dataclasses.replace(pa, report=with_column_check(pa.report, rel.path, rel.fmt,
                                                              rel.meta))
    steps.stage("drawing (figures)", None)
    note = ("Checked from the published table alone." if original is None else
            "Checked from the published table and the original data.")
    sections = [("glance", "The release at a glance",
                 glance(rel, _versions()["anonset"], P.columns(rel, pa))),
                ("verdict", "Privacy verdict", verdict(pa.report, note)),
                ("checks", "Every check", checks(pa.report)),
                ("attack", "Attack simulation", P.attack(pa, figs, rel.kind)),
                ("sizes", "Classes, groups and buckets", P.sizes(pa, figs)),
                ("utility", "Utility: information loss", P.utility(pa))]
    return sections, pa.report


def report(published: PathLike | Any, output: PathLike | None = None, *,
           original: PathLike | TableLike | None = None,
           pairs: str | Sequence[tuple[str, str]] | None = None, attack: bool = True,
           known: int | Sequence[str] | None = None, n_targets: int | None = None,
           methods: str | Sequence[str] | None = None, chunk_rows: int | None = None,
           top: int | None = None, seed: int | None = None, format: str | None = None,
           original_format: str | None = None,
           progress: Callable[[int], None] | None = None,
           command: str | None = None) -> Page:
    """The release report: one self-contained HTML page for signing off a
    release (no script, no font, nothing loaded from anywhere).

    Parameters
    ----------
    published : path, SetTable, or an LGB / MSA result
        The release: a file written by ``anonset anonymize``,
        ``semantic-anonymize``, ``lgb`` or ``msa-anonymize`` (partition
        releases as .parquet), or the object in memory.
    output : path, optional
        Where to write the page (atomically; never over an input).
    original : path or DataFrame, optional
        The original data: adds the data holder's checks and utility
        against the truth.
    pairs : 'a:b,c:d' or list of (a, b), optional
        Attribute pairs whose cross-tabulation is shown (default: a few).
    attack, known, n_targets, seed
        The attack simulation (:func:`anonset.audit`; ``known`` default 1,
        ``n_targets`` 10,000); ``seed`` seeds the audit's samples, never the
        release.  An LGB or msa release refuses each of them given.
    methods : sequence of str, optional
        Reconstruction methods compared on the pairs (default 'em' and
        'exact_em', 'em' only for a release read in chunks; for semantic
        tables paper 001's 'em' and 'linear'); marginals use the first.
    chunk_rows : int, optional
        Read a set table in chunks of this many rows (bounded memory); 0:
        whole in memory.  Default: chunks above 2,000,000 rows.
    top : int, optional
        Values shown per chart axis (default 15); the rest are summed as
        'other'.
    progress : callable, optional
        Called with rows (or steps) done; its ``stage(desc, total)`` too
        where it has one.
    command : str, optional
        The command line shown under "reproduce" (default: built from the
        arguments).

    Returns
    -------
    Page
        ``html`` (the page), ``verdict``, ``kind``, ``rows`` and ``path``.

    Examples
    --------
    >>> import pandas as pd, anonset
    >>> df = pd.DataFrame({"a": list("xyzw") * 10, "b": list("uvwst") * 8})
    >>> pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a", "b"], seed=3,
    ...                       research_seed=True)
    >>> page = report(pub, original=df, n_targets=20, methods=["em"])
    >>> page.verdict, page.kind, "<script" in page.html
    ('RISKS FOUND', 'sets', False)
    """
    # None: not given (the defaults 1, 10,000 and 15 below); a partition
    # release refuses each one given, its default value included
    given_known, given_targets, given_top = known is not None, n_targets is not None, \
        top is not None
    known = 1 if known is None else known
    n_targets = check_int(10_000 if n_targets is None else n_targets, "n_targets", minimum=1)
    top = check_int(15 if top is None else top, "top", minimum=3)
    if chunk_rows is not None:
        chunk_rows = check_int(chunk_rows, "chunk_rows", minimum=0)
    protect = [p for p in (published, original) if isinstance(p, (str, Path))]
    if isinstance(published, (str, Path)):
        protect.append(Path(str(published) + ".anonset.json"))
    if output is not None:
        from ...io.atomic import check_folder_writable, same_file
        if any(same_file(output, p) for p in protect):
            raise InputError("is an input file", param="output",
                             expected="another name (inputs are never overwritten)")
        # before the page is built, as the command checks it (H159)
        check_folder_writable(output, "output")
    steps = Steps(progress)
    rel = open_release(published, chunk_rows=chunk_rows, format=format)
    if rel.randomized and rel.n_rows == 0:
        from ..report import EMPTY_EXPECTED        # as the audit says it (H88)
        is_file = isinstance(published, (str, PurePath))
        raise InputError("has no rows", param=None if is_file else "published",
                         file=str(published) if is_file else None, expected=EMPTY_EXPECTED)
    if not rel.randomized:
        # an lgb / msa release is audited by its classes and buckets (its
        # adversary always runs) and shows no reconstruction: the options of
        # a set table's page, named, are refused rather than ignored
        given = {"pairs": pairs is not None, "attack": attack is not True,
                 "known": given_known, "n_targets": given_targets,
                 "methods": methods is not None, "seed": seed is not None,
                 "chunk_rows": chunk_rows is not None, "top": given_top}
        from ..partition import refuse_set_options
        refuse_set_options(given, rel.kind,
                           "its page shows its classes, buckets and class adversary")
    from ...io.stream import DEFAULT_CHUNK_ROWS
    opts = {"pairs": pairs, "attack": bool(attack), "known": known, "n_targets": n_targets,
            "seed": seed, "methods": methods, "top": top,
            "chunk_rows": chunk_rows or DEFAULT_CHUNK_ROWS, "chunk_given": chunk_rows,
            "original_format": original_format}
    orig = original if rel.streamed else _original_frame(original, original_format,
                                                         rel.declared_values())
    figs = Figures(steps)
    build = _set_sections if rel.randomized else _partition_sections
    sections, rep = build(rel, orig, opts, steps, figs)
    cmds = _commands(rel, published, original, opts, output)
    if command:
        cmds[0] = command
    sections.append(("reproduce", "Reproduce and sign off", reproduce(cmds, _versions())))
    html = document(f"anonset release report: {rel.name}",
                    f"{rel.n_rows:,} rows; paper {rel.paper}: {rel.what}; verdict {rep.verdict}",
                    sections, attrs={"data-anonset-report": "1", "data-kind": rel.kind},
                    notice=None if original is None else CONFIDENTIAL)
    if output is not None:
        from ...io.atomic import atomic_path
        # with the original data the page holds its statistics (true counts,
        # some small): readable by its owner only, as the key files are
        with atomic_path(Path(output), protect=protect, private=original is not None) as tmp:
            Path(tmp).write_text(html, encoding="utf-8")
    return Page(html, rep.verdict, rel.kind, rel.n_rows, Path(output) if output else None)
