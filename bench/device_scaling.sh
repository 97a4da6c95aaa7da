#!/bin/sh
# One prepared run on a lent many-core machine (bench/RESULTS.md, "Scaling"):
# the machine's facts, then bench/omp_scaling.c (1..16 threads) and
# bench/cliff_parts.c and bench/cliff_alias.c (target 2b's pieces and the
# other maps, one thread), then omp_scaling again while one busy process per
# core competes for the machine (the raw kernels, without the Python EM
# driver's thread choice).  Plain C: the machine needs gcc and libgomp, not
# the Python environment.  Output under $OUT (or ./device_out).
set -u
OUT=${OUT:-./device_out}
mkdir -p "$OUT"
{
    date -u
    uname -a
    nproc
    lscpu 2>/dev/null | grep -E 'Model name|Socket|Thread|Core|NUMA node\(s\)|L3|Flags' \
        | sed 's/^\(Flags:.\{0,40\}\).*\(avx512f\).*/\1 ... \2 .../'
    grep -m1 -o 'avx512[a-z]*' /proc/cpuinfo | head -1
    gcc --version | head -1
    uptime
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
CFLAGS="-O3 -fno-strict-aliasing -fopenmp -DANONSET_HAVE_OPENMP=1 -Icsrc/common -Icsrc/randomized"
gcc $CFLAGS bench/omp_scaling.c csrc/common/rng.c csrc/randomized/sample.c \
    csrc/randomized/counts.c csrc/randomized/em.c -lm -o "$OUT/omp_scaling" || exit 3
gcc $CFLAGS bench/cliff_parts.c csrc/common/rng.c -lm -o "$OUT/cliff_parts" || exit 3
gcc $CFLAGS bench/cliff_alias.c csrc/common/rng.c -lm -o "$OUT/cliff_alias" || exit 3
echo "== cliff_parts (1 thread)"
OMP_NUM_THREADS=1 timeout 120 "$OUT/cliff_parts" 2>&1 | tee "$OUT/cliff_parts.txt"
echo "== cliff_alias (1 thread)"
OMP_NUM_THREADS=1 timeout 120 taskset -c 1 "$OUT/cliff_alias" bench 7 2>&1 \
    | tee "$OUT/cliff_alias.txt"
echo "== omp_scaling"
OMP_PROC_BIND=close OMP_PLACES=cores timeout 300 stdbuf -oL "$OUT/omp_scaling" ${ROWS:-} 2>&1 | tee "$OUT/omp_scaling.txt"
uptime | tee -a "$OUT/machine.txt"
if [ "${BUSY:-1}" != 0 ]; then
    # one competing busy process per processor, for the whole second run
    pids=""
    for _ in $(seq "$(nproc)"); do
        sh -c 'while :; do :; done' & pids="$pids $!"
    done
    sleep 1
    echo "== omp_scaling, $(nproc) busy processes beside it"
    uptime | tee "$OUT/busy_load.txt"
    OMP_PROC_BIND=close OMP_PLACES=cores timeout "${BUSY_LIMIT:-240}" stdbuf -oL "$OUT/omp_scaling" ${ROWS:-} 2>&1 \
        | tee "$OUT/omp_scaling_busy.txt"
    uptime | tee -a "$OUT/busy_load.txt"
    kill $pids 2>/dev/null
    wait 2>/dev/null
fi
rm -f "$OUT/omp_scaling" "$OUT/cliff_parts" "$OUT/cliff_alias"
