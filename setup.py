"""Build the compiled kernels of anonset.

Every extension ``src/anonset/**/_<name>.pyx`` is compiled together with the
C99 kernels in ``csrc/`` that it uses: the headers named in its
``cdef extern from "x.h"`` lines, and, transitively, the headers those
kernels include (``x.h`` -> ``x.c`` in the same folder of ``csrc/``, which
mirrors the packages: ``common/``, ``randomized/``, ``partition/``).  OpenMP is probed by compiling *and running* a tiny
program; the decision is printed in one line.  Environment overrides:

ANONSET_OPENMP=0          build serial kernels even if OpenMP is available
ANONSET_REQUIRE_OPENMP=1  fail the build when OpenMP is not available
ANONSET_SANITIZE=1        build with AddressSanitizer + UBSan (debug builds)
"""
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).parent
PYX = sorted((HERE / "src" / "anonset").rglob("_*.pyx"))
#: csrc and its subfolders: every header is found by its name alone.
CSRC_DIRS = [HERE / "csrc"] + sorted(p for p in (HERE / "csrc").iterdir() if p.is_dir())


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


class BuildExt(build_ext):
    def build_extensions(self):
        ctype = self.compiler.compiler_type
        want = os.environ.get("ANONSET_OPENMP", "1") != "0"
        require = os.environ.get("ANONSET_REQUIRE_OPENMP", "0") == "1"
        cflags, ldflags = _openmp_flags(ctype)
        has_omp = want and _probe_openmp(self.compiler, cflags, ldflags)
        if require and not has_omp:
            raise RuntimeError("anonset: ANONSET_REQUIRE_OPENMP=1 but OpenMP is not usable")
        print(f"anonset: OpenMP {'enabled' if has_omp else 'DISABLED (kernels run serially)'} "
              f"[compiler={ctype}]")
        base = ["/O2"] if ctype == "msvc" else ["-O3", "-fno-strict-aliasing"]
        base_ld = []
        if os.environ.get("ANONSET_SANITIZE") == "1" and ctype != "msvc":
            san = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g", "-O1"]
            base, base_ld = san, ["-fsanitize=address,undefined"]
        for ext in self.extensions:
            ext.extra_compile_args = base + (cflags if has_omp else [])
            ext.extra_link_args = base_ld + (ldflags if has_omp else [])
            ext.define_macros = list(ext.define_macros or []) + [
                ("ANONSET_HAVE_OPENMP", "1" if has_omp else "0"),
                ("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION"),
            ]
        super().build_extensions()


def _extensions():
    exts = []
    for pyx in PYX:
        rel = pyx.relative_to(HERE / "src").with_suffix("")
        name = ".".join(rel.parts)
        exts.append(Extension(
            name,
            sources=[str(pyx.relative_to(HERE))] + _kernel_sources(pyx),
            include_dirs=[str(d.relative_to(HERE)) for d in CSRC_DIRS] + [np.get_include()],
        ))
    return cythonize(exts, language_level=3, compiler_directives={
        "boundscheck": False, "wraparound": False, "cdivision": True,
        "initializedcheck": False})


setup(ext_modules=_extensions(), cmdclass={"build_ext": BuildExt})
