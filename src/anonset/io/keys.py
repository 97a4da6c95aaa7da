"""Keys for the counter-based generators.

The default key is 32 bytes from the operating system (``secrets``), used for
one publication and never written anywhere.  A user seed (int, str or bytes)
is hashed into a key so that research runs are reproducible; such a seed must
then be kept as secret as the data, since it determines every published set.
"""
from __future__ import annotations

import hashlib
import secrets

__all__ = ["make_key", "RNGS"]

RNGS = ("chacha20", "philox")
_DOMAIN = b"anonset.key.v1\x00"


def make_key(seed=None) -> bytes:
    """A 32-byte generator key: fresh from the OS when ``seed`` is None."""
    if seed is None:
        return secrets.token_bytes(32)
    if isinstance(seed, bool):
        raise TypeError("seed must be an int, str or bytes, not bool")
    if isinstance(seed, int):
        if seed < 0:
            raise ValueError(f"seed must be non-negative, got {seed}")
        raw = b"i" + seed.to_bytes((seed.bit_length() + 8) // 8, "little")
    elif isinstance(seed, str):
        raw = b"s" + seed.encode("utf-8")
    elif isinstance(seed, (bytes, bytearray)):
        raw = b"b" + bytes(seed)
    else:
        raise TypeError(f"seed must be an int, str or bytes, got {type(seed).__name__}")
    return hashlib.sha256(_DOMAIN + raw).digest()


def check_rng(rng: str) -> str:
    if rng not in RNGS:
        raise ValueError(f"rng must be one of {RNGS}, got {rng!r}")
    return rng
