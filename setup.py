"""Build the compiled kernels of anonset.

Every extension ``src/anonset/**/_<name>.pyx`` is compiled together with the
C99 kernels in ``csrc/`` that it uses: the headers named in its
``cdef extern from "x.h"`` lines, and, transitively, the headers those
kernels include (``x.h`` -> ``x.c`` in the same folder of ``csrc/``, which
mirrors the packages: ``common/``, ``randomized/``, ``partition/``).  OpenMP is
probed by compiling *and running* a tiny program; the decision is printed in
one line.

The build is parallel (docs/building.md): the ``.pyx`` files are translated
by Cython in parallel processes, then every distinct C file (a kernel shared by
several extensions is compiled once) is compiled on a pool of jobs, the
largest first, each finished file reported on stderr; the extensions are then
linked.  Cython and NumPy are imported only when extensions are built, so
pip's metadata steps do no compiling.  Environment overrides:

ANONSET_OPENMP=0          build serial kernels even if OpenMP is available
ANONSET_REQUIRE_OPENMP=1  fail the build when OpenMP is not available
ANONSET_SANITIZE=1        build with AddressSanitizer + UBSan (debug builds)
ANONSET_BUILD_JOBS=N      compile on N jobs (default: the CPUs available;
                          ``build_ext -j N`` sets it too)
"""
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).parent
PYX = sorted((HERE / "src" / "anonset").rglob("_*.pyx"))
#: csrc and its subfolders: every header is found by its name alone.
CSRC_DIRS = [HERE / "csrc"] + sorted(p for p in (HERE / "csrc").iterdir() if p.is_dir())
#: every kernel header: a changed header rebuilds (distutils compares only these dates)
HEADERS = sorted(str(h.relative_to(HERE)) for d in CSRC_DIRS for h in d.glob("*.h"))
CYTHON_DIRECTIVES = {"boundscheck": False, "wraparound": False, "cdivision": True,
                     "initializedcheck": False}


def _find(stem: str, suffix: str):
    for d in CSRC_DIRS:
        if (d / f"{stem}{suffix}").exists():
            return d / f"{stem}{suffix}"
    return None


_EXTERN = re.compile(r'^\s*cdef\s+extern\s+from\s+"([^"]+)\.h"', re.M)
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)\.h"', re.M)


def _kernel_sources(pyx: Path) -> list:
    """csrc/*.c files an extension needs, following includes transitively."""
    todo = _EXTERN.findall(pyx.read_text())
    seen, out = set(), []
    while todo:
        stem = todo.pop()
        if stem in seen:
            continue
        seen.add(stem)
        for path in (_find(stem, ".h"), _find(stem, ".c")):
            if path is not None:
                todo.extend(_INCLUDE.findall(path.read_text()))
        c = _find(stem, ".c")
        if c is not None:
            out.append(str(c.relative_to(HERE)))
    return sorted(out)


PROBE = r"""
#include <omp.h>
#include <stdio.h>
int main(void) {
    int n = 0;
    #pragma omp parallel reduction(+:n)
    n += 1;
    printf("%d\n", n);
    return n > 0 ? 0 : 1;
}
"""


def _openmp_flags(compiler_type: str):
    """Return (compile_args, link_args) for OpenMP on this compiler."""
    if compiler_type == "msvc":
        return ["/openmp"], []
    if sys.platform == "darwin":
        prefix = os.environ.get("LIBOMP_PREFIX") or next(
            (p for p in ("/opt/homebrew/opt/libomp", "/usr/local/opt/libomp") if Path(p).exists()),
            None,
        )
        if prefix:
            return (["-Xpreprocessor", "-fopenmp", f"-I{prefix}/include"],
                    [f"-L{prefix}/lib", "-lomp", f"-Wl,-rpath,{prefix}/lib"])
        return ["-Xpreprocessor", "-fopenmp"], ["-lomp"]
    return ["-fopenmp"], ["-fopenmp"]


def _probe_openmp(compiler, cflags, ldflags) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "probe.c"
        src.write_text(PROBE)
        try:
            objs = compiler.compile([str(src)], output_dir=tmp, extra_postargs=cflags)
            exe = str(Path(tmp) / "probe")
            compiler.link_executable(objs, exe, extra_postargs=ldflags)
            subprocess.run([exe], check=True, capture_output=True, timeout=60)
            return True
        except Exception:  # any failure means: no usable OpenMP
            return False


def _say(msg: str) -> None:
    """One line of build progress on stderr (pip shows it with ``pip install -v``)."""
    print(f"anonset: {msg}", file=sys.stderr, flush=True)


def _jobs(parallel) -> int:
    env = os.environ.get("ANONSET_BUILD_JOBS")
    if env:
        return max(1, int(env))
    if isinstance(parallel, int) and not isinstance(parallel, bool) and parallel > 0:
        return parallel
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


class BuildExt(build_ext):
    """build_ext with a parallel Cython step and a parallel, de-duplicated compile."""

    def build_extensions(self):
        t0 = time.perf_counter()
        jobs = _jobs(self.parallel)
        self._cythonize(jobs)
        ctype = self.compiler.compiler_type
        want = os.environ.get("ANONSET_OPENMP", "1") != "0"
        require = os.environ.get("ANONSET_REQUIRE_OPENMP", "0") == "1"
        cflags, ldflags = _openmp_flags(ctype)
        has_omp = want and _probe_openmp(self.compiler, cflags, ldflags)
        if require and not has_omp:
            raise RuntimeError("anonset: ANONSET_REQUIRE_OPENMP=1 but OpenMP is not usable")
        _say(f"OpenMP {'enabled' if has_omp else 'DISABLED (kernels run serially)'} "
             f"[compiler={ctype}]")
        sanitize = os.environ.get("ANONSET_SANITIZE") == "1" and ctype != "msvc"
        if ctype == "msvc":
            base, base_ld = ["/O2"], []
        elif sanitize:
            base = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g", "-O1"]
            base_ld = ["-fsanitize=address,undefined"]
        else:
            # -g0: Python's CFLAGS ask for debug info, which costs a quarter of
            # the compile time and 85% of the wheel's size
            base, base_ld = ["-O3", "-g0", "-fno-strict-aliasing"], []
        import numpy as np
        for ext in self.extensions:
            ext.include_dirs = list(ext.include_dirs) + [np.get_include()]
            ext.extra_compile_args = base + (cflags if has_omp else [])
            ext.extra_link_args = base_ld + (ldflags if has_omp else [])
            ext.define_macros = list(ext.define_macros or []) + [
                ("ANONSET_HAVE_OPENMP", "1" if has_omp else "0"),
                ("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION"),
            ]
        # Cython's generated glue has no hot loops (those live in csrc/): -O2
        glue = [] if (sanitize or ctype == "msvc") else ["-O2"]
        if self.force or any(self._out_of_date(ext) for ext in self.extensions):
            self._compile_all(jobs, glue)
        self.parallel = None            # linking is quick: serially, below
        super().build_extensions()
        _say(f"built {len(self.extensions)} extensions in {time.perf_counter() - t0:.1f} s "
             f"on {jobs} job(s)")

    def _out_of_date(self, ext) -> bool:
        from setuptools.modified import newer_group
        return newer_group(list(ext.sources) + list(ext.depends),
                           self.get_ext_fullpath(ext.name), "newer")

    def _cythonize(self, jobs: int) -> None:
        """Translate the .pyx sources to C (only those out of date)."""
        from Cython.Build import cythonize
        import multiprocessing
        # Cython's process pool needs fork; elsewhere (macOS, Windows) it runs serially
        forks = multiprocessing.get_start_method(allow_none=False) == "fork"
        # the C goes to this interpreter's build folder, not src/: its NumPy's
        # .pxd shapes it, so two interpreters must not share one generated file
        pyx = [Extension(ext.name, ext.sources[:1]) for ext in self.extensions]
        done = cythonize(pyx, nthreads=jobs if forks and jobs > 1 else 0,
                         build_dir=os.path.join(self.build_temp, "cython"),
                         language_level=3, compiler_directives=CYTHON_DIRECTIVES, quiet=True)
        glue = {e.name: e.sources for e in done}
        for ext in self.extensions:      # keep setuptools' own Extension objects
            ext.sources = glue[ext.name] + ext.sources[1:]

    def _compile_all(self, jobs: int, glue_flags: list) -> None:
        """Compile every distinct source once on ``jobs`` threads (the compiler
        runs as a subprocess, so threads suffice); build_extension then finds
        the objects ready and only links."""
        first = self.extensions[0]
        same = ("include_dirs", "define_macros", "extra_compile_args")
        for ext in self.extensions:
            if any(getattr(ext, a) != getattr(first, a) for a in same):
                raise RuntimeError(f"anonset: {ext.name} has its own compile flags; "
                                   "setup.py compiles shared kernels once and needs one set")
        cython_c = {str(Path(s)) for ext in self.extensions for s in ext.sources[:1]}
        sources = sorted({s for ext in self.extensions for s in ext.sources},
                         key=lambda s: -os.path.getsize(s))
        if getattr(self.compiler, "initialized", True) is False:
            self.compiler.initialize()  # MSVC: find the toolchain once, before the threads
        compile_one = self.compiler.compile

        def work(src):
            t = time.perf_counter()
            extra = first.extra_compile_args + (glue_flags if str(Path(src)) in cython_c else [])
            objs = compile_one([src], output_dir=self.build_temp, macros=first.define_macros,
                               include_dirs=first.include_dirs, debug=self.debug,
                               extra_postargs=extra, depends=first.depends)
            return src, objs[0], time.perf_counter() - t

        objects = {}
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(work, s) for s in sources]
            for i, fut in enumerate(as_completed(futures), 1):
                src, obj, dt = fut.result()
                objects[src] = obj
                _say(f"[{i}/{len(sources)}] compiled {src} ({dt:.1f} s)")

        def compiled(sources, output_dir=None, **_):
            return [objects[s] for s in sources]
        self.compiler.compile = compiled


def _extensions():
    exts = []
    for pyx in PYX:
        rel = pyx.relative_to(HERE / "src").with_suffix("")
        exts.append(Extension(
            ".".join(rel.parts),
            sources=[str(pyx.relative_to(HERE))] + _kernel_sources(pyx),
            include_dirs=[str(d.relative_to(HERE)) for d in CSRC_DIRS],
            depends=HEADERS,
        ))
    return exts


setup(ext_modules=_extensions(), cmdclass={"build_ext": BuildExt})
