"""The results page of a reproduction (Markdown): where and how it was made,
each figure beside the paper's reported values or trends, row by row, with a
verdict -- ``match``, ``differs`` (with the measured reason, or saying it
was not measured), ``not comparable`` (why) or ``not decided`` (the
difference lies within the measurement's noise) -- and the files written."""
from __future__ import annotations

import datetime as dt
import os
import platform
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Page", "Row", "VERDICTS", "machine_line", "reductions"]

VERDICTS = ("match", "differs", "not comparable", "not decided")

#: the 'why' of a 'differs' given none: a difference states its measured
#: reason or that none was measured (H89)
UNMEASURED = "reason not measured"


@dataclass
class Row:
    """One comparison: what the paper reports, what we measured, the verdict
    and its reason."""
    item: str
    paper: str
    ours: str
    verdict: str
    why: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.verdict == "differs" and not self.why.strip():
            self.why = UNMEASURED


def reductions(scales: dict, scale: str, labels: dict | None = None) -> str:
    """The settings in which run ``scale`` departs from the full run, each
    named beside the full run's value (a quick page names every reduction it
    makes: H89); empty for the full run."""
    if scale == "full":
        return ""
    c, full = scales[scale], scales["full"]
    labels = labels or {}

    def fmt(v):
        if v is None:
            return "all (the paper's size)"
        if isinstance(v, (tuple, list)):
            return "{" + ", ".join(fmt(x) for x in v) + "}"
        if isinstance(v, float):
            return f"{v:.3g}"
        return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)

    parts = [f"{labels.get(k, k)} {fmt(c[k])} (full: {fmt(full[k])})"
             for k in full if k in c and c[k] != full[k] and labels.get(k, k)]
    return (f"**Reduced in this {scale} run** (every verdict below is over these reduced "
            "settings, trends included): " + "; ".join(parts) + ".") if parts else ""


def source_digest() -> str:
    """The first 12 hex digits of a SHA-256 over the installed package's
    Python files (names and contents): which code made a results page,
    whether it runs from a checkout or a wheel (H146: every page said
    'anonset 0.1.0', made by different code)."""
    import hashlib
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(str(f.relative_to(root)).encode() + b"\x00" + f.read_bytes() + b"\x00")
    return h.hexdigest()[:12]


def machine_line() -> str:
    """CPU, cores, memory, OS, load, anonset build (with its source digest
    and where the keys come from)."""
    from .._info import build_info
    info = build_info()
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
        mem_s = f"{mem:.0f} GiB RAM, "
    except (ValueError, OSError, AttributeError):
        mem_s = ""
    try:
        load = f"load average {os.getloadavg()[0]:.2f} at the end"
    except OSError:
        load = "load unknown"
    return (f"{info['processor']}, {os.cpu_count()} logical CPUs, {mem_s}{platform.platform()} "
            f"({load}); Python {info['python']}, anonset {info['anonset']} (source "
            f"{source_digest()}), OpenMP {info['openmp']}, {info['threads']} threads; keys: "
            "research seeds fixed in anonset.reproduce (its SEED names), so the same source "
            "gives the same numbers")


@dataclass
class Page:
    """Collects a paper's results page; :meth:`write` renders it."""
    paper: str
    title: str
    command: str
    scale: str
    intro: list = field(default_factory=list)
    sections: list = field(default_factory=list)     # (heading, [lines])
    rows: list = field(default_factory=list)         # (figure, Row)
    files: list = field(default_factory=list)

    def text(self, heading: str, *lines: str) -> None:
        self.sections.append((heading, list(lines)))

    def compare(self, figure: str, item: str, paper: str, ours: str, verdict: str,
                why: str = "") -> Row:
        row = Row(item, paper, ours, verdict, why)
        self.rows.append((figure, row))
        return row

    def table(self, heading: str, frame, floatfmt: str = ".4g", intro: str = "") -> None:
        """A DataFrame as a Markdown table section."""
        lines = [intro, ""] if intro else []
        cols = list(frame.columns)
        lines.append("| " + " | ".join(str(c) for c in cols) + " |")
        lines.append("|" + "---|" * len(cols))
        for _, r in frame.iterrows():
            cells = []
            for c in cols:
                v = r[c]
                if isinstance(v, float):
                    cells.append("-" if v != v else format(v, floatfmt))
                else:
                    cells.append(str(v))
            lines.append("| " + " | ".join(cells) + " |")
        self.sections.append((heading, lines))

    def counts(self) -> dict:
        out = {v: 0 for v in VERDICTS}
        for _, r in self.rows:
            out[r.verdict] += 1
        return out

    def render(self, seconds: float) -> str:
        now = dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
        c = self.counts()
        L = [f"# Paper {self.paper}: {self.title}", "",
             f"Made by `{self.command}` ({self.scale} run) on {now} in {seconds / 60:.1f} "
             "minutes.", "", f"Machine: {machine_line()}.", ""]
        L += self.intro + ([""] if self.intro else [])
        L += [f"**Summary: {len(self.rows)} comparisons -- {c['match']} match, "
              f"{c['differs']} differ, {c['not comparable']} not comparable, "
              f"{c['not decided']} not decided.**", "",
              "## The paper's results beside ours", "",
              "| figure | item | paper | ours | verdict | why |", "|---|---|---|---|---|---|"]
        for fig, r in self.rows:
            cells = [fig, r.item, r.paper, r.ours, f"**{r.verdict}**", r.why]
            L.append("| " + " | ".join(x.replace("|", "/").replace("\n", " ")
                                       for x in cells) + " |")
        for heading, lines in self.sections:
            L += ["", f"## {heading}", ""] + lines
        if self.files:
            L += ["", "## Files", ""] + [f"- `{f}`" for f in sorted(set(self.files))]
        return "\n".join(L) + "\n"

    def write(self, out: Path, seconds: float) -> Path:
        path = Path(out) / "README.md"
        path.write_text(self.render(seconds), encoding="utf-8")
        return path
