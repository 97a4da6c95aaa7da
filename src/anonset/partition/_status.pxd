# cython: language_level=3
# Kernel status codes (csrc/common/anonset_common.h) as Python exceptions,
# for the wrappers of the partition kernels (_lgb.pyx, _msa.pyx).

cdef extern from "anonset_common.h":
    int ANONSET_OK
    int ANONSET_ERR_NOMEM


cdef inline check_status(int status, str what, str bad):
    """Return on ANONSET_OK; else MemoryError or ValueError naming the kernel."""
    if status == ANONSET_OK:
        return
    if status == ANONSET_ERR_NOMEM:
        raise MemoryError(f"{what}: scratch allocation failed")
    raise ValueError(f"{what}: {bad} (status {status})")
