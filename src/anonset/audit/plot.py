"""Bar charts of true versus reconstructed counts (like Fig. 7 of paper 000).

matplotlib is optional (``pip install 'anonset[plot]'``) and imported only
when a chart is drawn.  The chart is drawn on a bare ``Figure`` with the Agg
canvas, never through ``pyplot``, so it changes no global backend state and
works without a display.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from ..io.atomic import atomic_path

__all__ = ["require_matplotlib", "bar_chart"]

_INSTALL_HINT = "pip install 'anonset[plot]'"
#: Above this many cells the x axis shows cell numbers instead of labels.
MAX_LABELLED_CELLS = 40


def require_matplotlib():
    """Import matplotlib or raise ImportError saying how to install it."""
    try:
        import matplotlib  # noqa: F401
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: F401
        from matplotlib.figure import Figure  # noqa: F401
    except ImportError:
        raise ImportError(f"plotting needs matplotlib: {_INSTALL_HINT}") from None
    return matplotlib


def _cell_labels(ct) -> list:
    if len(ct.attributes) == 1:
        return [str(v) for v in ct.domains[0]]
    grids = np.meshgrid(*[np.arange(len(d)) for d in ct.domains], indexing="ij")
    flat = [g.ravel() for g in grids]
    return [" | ".join(str(ct.domains[j][flat[j][i]]) for j in range(len(ct.domains)))
            for i in range(flat[0].size)]


def bar_chart(true, estimates: Sequence, path, *, title: str | None = None,
              protect=(), dpi: int = 120) -> Path:
    """Write a PNG bar chart: the true count of every cell next to each
    estimate.

    Parameters
    ----------
    true : CrossTab
        The true counts (``anonset.true_crosstab``).
    estimates : CrossTab or sequence of CrossTab
        Reconstructions over the same attributes; each is labelled by its
        ``method``.
    path : str or Path
        Output PNG, written atomically.
    title : str, optional
    protect : paths never to overwrite (the inputs).

    Returns
    -------
    Path of the written file.

    Examples
    --------
    >>> import pandas as pd, anonset, tempfile, os
    >>> from anonset.audit.plot import bar_chart
    >>> df = pd.DataFrame({"a": list("xyzxyzxx"), "b": list("uvuvuvuv")})
    >>> pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a"], drop=["b"])
    >>> est = anonset.reconstruct(pub, ["a"])
    >>> truth = anonset.true_crosstab(df, pub.schema, ["a"])
    >>> out = os.path.join(tempfile.mkdtemp(), "a.png")
    >>> bar_chart(truth, est, out).name
    'a.png'
    """
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not isinstance(estimates, (list, tuple)):
        estimates = [estimates]
    for e in estimates:
        if tuple(e.attributes) != tuple(true.attributes) or e.counts.shape != true.counts.shape:
            raise ValueError(f"estimate {e.method!r} is over {list(e.attributes)} with shape "
                             f"{e.counts.shape}; the truth is over {list(true.attributes)} with "
                             f"shape {true.counts.shape}")
    series = [("true", true.counts.ravel())] + [(e.method, e.counts.ravel()) for e in estimates]
    ncells = true.counts.size
    width = min(0.8 / len(series), 0.4)
    fig = Figure(figsize=(max(6.0, min(16.0, 0.1 * ncells * len(series) + 2)), 4.5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(ncells)
    for k, (name, y) in enumerate(series):
        ax.bar(x + (k - (len(series) - 1) / 2) * width, y, width, label=name)
    if ncells <= MAX_LABELLED_CELLS:
        ax.set_xticks(x)
        ax.set_xticklabels(_cell_labels(true), rotation=70, ha="right", fontsize=7)
        ax.set_xlabel(" x ".join(true.attributes))
    else:
        ax.set_xlabel(f"cell of {' x '.join(true.attributes)} (C order, last attribute fastest)")
    ax.set_ylabel("number of records")
    ax.set_title(title or f"True vs reconstructed counts: {' x '.join(true.attributes)}")
    ax.legend()
    fig.tight_layout()
    path = Path(path)
    # the true counts of the original data: readable by their owner only
    with atomic_path(path, protect=protect, private=True) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi)
    return path
