"""A census-shaped Parquet input for the file benchmarks (stream_scale.py,
report_scale.py): ``rows`` rows of ``n_attrs`` coded attributes from
:func:`anonset.synthetic.census_like_codes`, written a million rows at a time
so that memory stays bounded at any size."""
from __future__ import annotations

from pathlib import Path


def make_census_parquet(path: Path, rows: int, n_attrs: int, chunk: int = 1_000_000) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from anonset.synthetic import census_like_codes
    writer, done = None, 0
    while done < rows:
        n = min(chunk, rows - done)
        codes, _ = census_like_codes(n, n_attrs, seed=done)
        t = pa.table({k: pa.array(v) for k, v in codes.items()})
        if writer is None:
            writer = pq.ParquetWriter(path, t.schema)
        writer.write_table(t)
        done += n
    writer.close()
