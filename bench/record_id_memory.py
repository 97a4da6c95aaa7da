"""The persistent mode's check of values that change between one record's
rows (anonset.shared_ids.changed_records, H65): its memory and time, and the
first pass's peak RSS end to end (docs/scaling.md).

    python bench/record_id_memory.py            # 2,000,000 rows
    ROWS=10000000 python bench/record_id_memory.py

A table of ROWS rows: ROWS / 4 records of 4 rows each, 10 sensitive columns
of 12 values that never change within a record (the check's worst case for
memory: every row belongs to a record of several).  Part A times
cell_codes + changed_records alone (tracemalloc); part B runs
anonset.stream.publish_file on the table written as Parquet in a fresh
process under /usr/bin/time (peak RSS).  BEFORE=path/to/src runs part B a
second time on another checkout (its built extensions copied in) for a
before/after pair.  Files go to $TMPDIR (default /tmp).
"""
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc

import numpy as np
import pandas as pd

N = int(os.environ.get("ROWS", 2_000_000))
W = os.path.join(tempfile.gettempdir(), "anonset-record-id-bench")
os.makedirs(W, exist_ok=True)
path = f"{W}/table_{N}.parquet"
rng = np.random.default_rng(1)
rec = N // 4
pid = np.repeat(rng.permutation(rec), 4)
cols = {f"s{j}": np.repeat(rng.integers(0, 12, rec), 4).astype(np.int8) for j in range(10)}
if not os.path.exists(path):
    pd.DataFrame({"pid": pid, **cols}).to_parquet(path, index=False, row_group_size=500_000)

from anonset.engine.stats import cell_codes                # noqa: E402
from anonset.io.keys import checked_record_hashes           # noqa: E402
from anonset.shared_ids import changed_records              # noqa: E402

S, chunk = list(cols), 200_000
ids = [checked_record_hashes(pid[i:i + chunk], text=False, column="pid")
       for i in range(0, N, chunk)]
tracemalloc.start()
t = time.perf_counter()
vals = [cell_codes(pd.DataFrame(index=range(min(chunk, N - i))), S,
                   {c: cols[c][i:i + chunk].astype(np.int64) for c in S})
        for i in range(0, N, chunk)]
t_codes = time.perf_counter() - t
held = tracemalloc.get_traced_memory()[0]
tracemalloc.reset_peak()
t = time.perf_counter()
out = changed_records(ids, vals, S)
t_cmp = time.perf_counter() - t
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
print(f"A. {N:,} rows x 10 columns: codes {t_codes:.2f} s, {held / 1e6:.0f} MB kept until "
      f"the plan; changed_records {t_cmp:.2f} s, {(peak - held) / 1e6:.0f} MB while comparing "
      f"({(peak - held) / N:.0f} bytes a row); result {out}")
del vals, ids

child = f"""
import time, warnings, anonset
from anonset.stream import publish_file
warnings.simplefilter('ignore')
S = {S!r}
t = time.perf_counter()
publish_file({path!r}, {W!r} + '/out.parquet', anonset.Diversity(3), chunk_rows=200_000,
             identifiers=['pid'], record_id='pid', key_file={W!r} + '/k.key',
             first_in_series=True, sensitive=S, domains={{c: list(range(12)) for c in S}},
             n_threads=2)
print(f"{{time.perf_counter() - t:.2f}} s", end=", ")
"""
if not os.path.exists(f"{W}/k.key"):
    import anonset
    anonset.io.keys.new_key_file(f"{W}/k.key")
runs = [("this checkout", None)]
if os.environ.get("BEFORE"):
    runs.insert(0, ("BEFORE", os.environ["BEFORE"]))
for label, src in runs:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if src:
        env["PYTHONPATH"] = src
    r = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-c", child], env=env,
                       capture_output=True, text=True)
    rss = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
    print(f"B. publish_file, chunk_rows=200,000, {label}: {r.stdout.strip()} peak RSS "
          f"{int(rss) / 1024:.0f} MB" if rss.isdigit() else r.stderr[-300:])
with open("/proc/loadavg") as f:
    print("load:", f.read().split()[:3])
