"""Keys for the counter-based generators, and the keyed row order.

A key is 32 bytes.  By default it is fresh from the operating system
(``secrets``), used for one publication and never written anywhere.  A seed
is key material: anyone who knows it can re-run the sampler for every
candidate true value and keep the candidates that reproduce a published set,
so a seed must be unguessable and kept as secret as the data.  Hence:

* a seed must carry at least 128 bits (16 bytes, 32 characters of text, or
  an int of at least 128 bits); an empty or short seed is refused;
* a short seed is allowed only for research runs, when the caller says so
  (``research_seed=True``); the published metadata then records the key mode
  ``'research-seed'`` and the audit flags it;
* the secret can come from a key file or an environment variable, so that it
  never sits on a command line.

Every other random choice of a publication is keyed from the same key
through :func:`derive_key`, with a different purpose, so that each is an
independent pure function of the key: the output order of the rows
(:func:`row_ranks`, :func:`shuffled_order`), the record IDs of partition
releases, the persistent per-record counters (:func:`record_counters`).
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import decimal
import hashlib
import math
import numbers
import os
import re
import secrets
import stat
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ..validate import InputError, check_bool, row_name

__all__ = ["make_key", "check_rng", "RNGS", "MIN_SEED_BYTES", "KEY_MODES", "key_mode",
           "read_key_file", "seed_from_env", "derive_key", "key_check", "row_ranks",
           "cell_salt", "shuffled_order", "record_hashes", "record_counters", "name_stream_ids",
           "new_key_file", "seed_bits"]

RNGS = ("chacha20", "philox")
#: Key modes recorded in published metadata (``info['key']``).
KEY_MODES = ("os", "seed", "research-seed", "persistent")
#: A seed must carry at least this many bytes (128 bits).
MIN_SEED_BYTES = 16
#: A key file is read up to this many bytes; a longer one is refused (a
#: device or an endless pipe named as the key file is never read whole).
MAX_KEY_FILE_BYTES = 2 ** 20
_DOMAIN = b"anonset.key.v1\x00"
_DERIVE = b"anonset.derive.v1\x00"


def _seed_bytes(seed) -> bytes:
    """The seed as tagged bytes (the tag keeps 1, '1' and b'1' apart)."""
    if isinstance(seed, bool):
        raise InputError("got a bool", param="seed", expected="bytes, str or int")
    if isinstance(seed, numbers.Integral):
        seed = int(seed)
        if seed < 0:
            raise InputError("got a negative int (not printed: a seed is key material)",
                             param="seed", expected="a non-negative int")
        return b"i" + seed.to_bytes((seed.bit_length() + 8) // 8, "little")
    if isinstance(seed, str):
        return b"s" + seed.encode("utf-8")
    if isinstance(seed, (bytes, bytearray, memoryview)):
        return b"b" + bytes(seed)
    raise InputError(f"got a {type(seed).__name__}", param="seed", expected="bytes, str or int")


def seed_bits(seed) -> int:
    """How many bits a seed can carry, by its length (its entropy cannot be
    measured: a long seed can still be guessable, which the docs say)."""
    if isinstance(seed, bool):
        return 0
    if isinstance(seed, numbers.Integral):
        return int(seed).bit_length()
    if isinstance(seed, str):
        return 4 * len(seed)           # 32 hex digits = 128 bits
    if isinstance(seed, (bytes, bytearray, memoryview)):
        return 8 * len(bytes(seed))
    return 0


#: A seed written with fewer distinct symbols (characters, bytes, or hex
#: digits of an int) is refused: 32 random hex digits show fewer than 6
#: with probability below 1e-12, 'aaaa...' and 2**127 show one or two.
MIN_SEED_SYMBOLS = 6


def _sequences(seed) -> list:
    """The seed as the symbols it is written with, in order (characters,
    bytes; an int's decimal digits, as it was typed, and its hex digits)."""
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        # 10**40 or 111...1 look random in hex (H82): read both ways
        return [[int(c) for c in str(abs(int(seed)))],
                [int(c, 16) for c in format(abs(int(seed)), "x")]]
    if isinstance(seed, str):
        return [[ord(c) for c in seed]]
    if isinstance(seed, (bytes, bytearray, memoryview)):
        return [list(bytes(seed))]
    return [[]]


def seed_pattern(seed) -> str | None:
    """What makes a long seed guessable at once, or None: too few distinct
    symbols ('aaaa...', 2**127), a block written over and over
    ('0123456789abcdef0123456789abcdef', the example every document shows),
    or symbols in sequence ('0123456789abcdefghijklmnopqrstuv').

    Random material trips none of them: 32 random hex digits show fewer
    than 6 symbols with probability below 1e-12, repeat a block of up to 16
    with probability below 2**-60, and continue an arithmetic run at half of
    their steps with probability about 1e-10.

    Examples
    --------
    >>> seed_pattern("0123456789abcdef0123456789abcdef")
    'repeats a block of 16 symbols'
    >>> seed_pattern("abcdefghijklmnopqrstuvwxyz012345")
    'is written in sequence (like 0123... or abcd...)'
    >>> seed_pattern("d1f3a8c04e9b27f65a0c3e81b7d9f246") is None
    True
    """
    for seq in _sequences(seed):
        variety = len(set(seq))
        if variety < MIN_SEED_SYMBOLS:
            return f"is written with {variety} distinct symbol(s)"
        n = len(seq)
        for p in range(1, n // 2 + 1):
            if all(seq[i] == seq[i + p] for i in range(n - p)):
                return f"repeats a block of {p} symbols"
        steps = [b - a for a, b in zip(seq, seq[1:])]
        runs = sum(s == t for s, t in zip(steps, steps[1:]))
        if n >= 8 and 2 * runs >= len(steps) - 1:
            return "is written in sequence (like 0123... or abcd...)"
    return None


def make_key(seed=None, *, research_seed: bool = False) -> bytes:
    """A 32-byte generator key: fresh from the OS when ``seed`` is None.

    Parameters
    ----------
    seed : bytes, str or int, optional
        Key material of at least 128 bits: 16 bytes, 32 characters, or an
        int of at least 128 bits (``secrets.token_hex(16)`` makes one).
    research_seed : bool
        Accept a shorter seed (for reproducible research runs on data that
        is not secret).  The caller records this in the metadata.

    Examples
    --------
    >>> len(make_key())
    32
    >>> make_key("d1f3a8c04e9b27f65a0c3e81b7d9f246") == make_key("d1f3a8c04e9b27f65a0c3e81b7d9f246")
    True
    >>> make_key(7)
    Traceback (most recent call last):
    ...
    anonset.validate.InputError: seed: got a seed of 3 bits; expected at least 128 bits ...
    >>> len(make_key(7, research_seed=True))
    32
    """
    if seed is None:
        return secrets.token_bytes(32)
    raw = _seed_bytes(seed)
    if not research_seed:
        bits = seed_bits(seed)
        if bits == 0:
            raise InputError("is empty", param="seed",
                             expected="at least 128 bits of secret key material")
        if bits < 8 * MIN_SEED_BYTES:
            # an int carries the bits of its length: secrets.randbits(128)
            # is shorter half the time, which the line says (not a flaky
            # refusal with no reason)
            whole = isinstance(seed, numbers.Integral) and bits >= 8 * MIN_SEED_BYTES - 16
            raise InputError(f"got a seed of {bits} bits" + (
                " (an int's bits are its length: secrets.randbits(128) is shorter about half "
                "the time; secrets.randbits(256) or secrets.token_hex(16) is not)"
                if whole else ""), param="seed",
                             expected="at least 128 bits (e.g. python -c 'import secrets; "
                                      "print(secrets.token_hex(16))'); a short seed can be "
                                      "guessed and then reveals every true value.  For a "
                                      "research run on data that is not secret, pass "
                                      "{@research_seed=True}")
        pattern = seed_pattern(seed)
        if pattern is not None:
            # its length says nothing then: 'aaaa...', 2**127 or the
            # documents' '0123456789abcdef0123456789abcdef' is guessed at once
            raise InputError(f"got a seed of {bits} bits that {pattern}", param="seed",
                             expected="random key material (anonset keygen FILE; "
                                      "python -c 'import secrets; print(secrets.token_hex(16))'),"
                                      " which shows many symbols; a repetitive seed is guessed "
                                      "and then reveals every true value.  For a research run "
                                      "on data that is not secret, pass {@research_seed=True}")
    return hashlib.sha256(_DOMAIN + raw).digest()


def check_research_seed(seed, research_seed) -> None:
    """``research_seed`` accepts a short seed for a reproducible research
    run; without any seed the key is fresh from the operating system and
    nothing is reproducible, so the flag is refused there rather than
    ignored.

    >>> check_research_seed(None, True)
    Traceback (most recent call last):
    ...
    anonset.validate.InputError: research_seed: is set, but no seed is given: ...
    """
    # a risk named is named with True: 'no' or 1 is no way to name it
    research_seed = check_bool(research_seed, "research_seed")
    if research_seed and seed is None:
        raise InputError("is set, but no seed is given: the key would be fresh from the "
                         "operating system, and the run not reproducible", param="research_seed",
                         expected="{@seed} given too (what reproduces the run), or no "
                                  "{@research_seed}")


def key_mode(seed, research_seed: bool = False, persistent: bool = False) -> str:
    """The key mode recorded in published metadata."""
    if persistent:
        return "persistent"
    if seed is None:
        return "os"
    # a seed the checks would refuse (short, or long but guessable: a
    # repeated block, one symbol) is the research run's: recorded as such,
    # so that the audit names it (H31)
    weak = seed_bits(seed) < 8 * MIN_SEED_BYTES or seed_pattern(seed) is not None
    return "research-seed" if research_seed and weak else "seed"


def check_rng(rng: str) -> str:
    if rng not in RNGS:
        raise InputError(f"got {rng!r}", param="rng", expected=f"one of {', '.join(RNGS)}")
    return rng


def seed_or_key_file(seed, key_file):
    """The key material a publisher's API takes as ``seed=`` or
    ``key_file=`` (one of them): a key file is read as the command line's
    ``--key-file`` reads it, so that the API reproduces the command's
    release; None where neither is given (a fresh key)."""
    if key_file is None:
        return seed
    if seed is not None:
        from ..validate import InputError
        raise InputError("was given together with a seed", param="key_file",
                         expected="either a key file or a seed")
    return read_key_file(key_file, param="key_file")


def read_key_file(path, *, param: str = "key_file") -> bytes:
    """The secret in a key file: its bytes (at least 16; a trailing newline
    of a text file is kept out).  The file is read, never written, and no
    further than 1 MiB: a device or a file holding more is refused (a pipe,
    ``<(cat key)``, is read)."""
    p = Path(path)
    # a key pasted where its file's name belongs is never echoed (H82): a
    # name of 24 characters or more without a dot, a path of 22 or more
    # without one anywhere (no key alphabet has a dot: hex, base32, base64
    # of 16 bytes even where it starts with '/', H85, H87), a folder that
    # does not exist, a name too long
    hidden = (len(p.name) >= 24 and "." not in p.name or len(p.name) > 255
              or len(str(path)) >= 22 and "." not in str(path))
    try:
        hidden = hidden or not p.parent.is_dir()
    except OSError:
        hidden = True
    unnamed = ("(the name is not printed: it may be the key itself)", param,
               "the path of a file holding at least 16 secret bytes (anonset keygen FILE)")
    try:
        # read at most MAX_KEY_FILE_BYTES + 1: /dev/urandom, /dev/zero or an
        # endless pipe named as the key file filled the memory (H144)
        with open(p, "rb") as f:
            data = f.read(MAX_KEY_FILE_BYTES + 1)
            if len(data) > MAX_KEY_FILE_BYTES:
                device = stat.S_ISCHR(os.fstat(f.fileno()).st_mode) or \
                    stat.S_ISBLK(os.fstat(f.fileno()).st_mode)
    except FileNotFoundError:
        if hidden:
            raise InputError("names no file " + unnamed[0], param=param,
                             expected=unnamed[2]) from None
        raise InputError("does not exist", param=param, file=p,
                         expected="a file holding at least 16 secret bytes") from None
    except IsADirectoryError:
        raise InputError("is a directory", param=param, file=p,
                         expected="a file holding at least 16 secret bytes") from None
    except OSError as e:
        if hidden:
            raise InputError(f"names no file that can be read ({e.strerror}) " + unnamed[0],
                             param=param, expected=unnamed[2]) from None
        raise InputError(f"cannot be read ({e.strerror})", param=param, file=p) from None
    if len(data) > MAX_KEY_FILE_BYTES:
        what = ("is a device, not a file" if device else
                f"holds more than {MAX_KEY_FILE_BYTES // 2**20} MiB")
        if hidden:
            raise InputError(what + " " + unnamed[0], param=param, expected=unnamed[2])
        raise InputError(what, param=param, file=p,
                         expected="a file holding at least 16 secret bytes (anonset keygen "
                                  "FILE writes 32)")
    try:
        mode = p.stat().st_mode
    except OSError:
        mode = 0
    if os.name == "posix" and mode & 0o077:
        warnings.warn(f"key file {str(p)!r} can be read or written by other users (mode "
                      f"{oct(mode & 0o777)[2:]}): whoever reads it can recover every true value "
                      f"of every release made with it; restrict it (chmod 600)", stacklevel=2)
    data = data.rstrip(b"\r\n")
    if len(data) < MIN_SEED_BYTES:
        raise InputError(f"holds {len(data)} bytes", param=param, file=p,
                         expected=f"at least {MIN_SEED_BYTES} secret bytes (anonset keygen "
                                  "FILE writes 32)")
    pattern = seed_pattern(data)
    if pattern is not None:
        raise InputError(f"holds {len(data)} bytes and {pattern}",
                         param=param, file=p,
                         expected="random key material (anonset keygen FILE writes 32 random "
                                  "bytes); a repetitive key is guessed and then reveals every "
                                  "true value")
    return data


def new_key_file(path) -> None:
    """Write 32 fresh bytes from the OS, hex-encoded, to a new file that only
    its owner can read.  An existing file is never overwritten."""
    p = Path(path)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    # the file is this call's from here on (O_EXCL): a write that fails (a
    # full disk, a file-size limit) removes it, so that no empty key file
    # is left for the next keygen to refuse as existing (H144)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32) + "\n")
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            p.unlink()
        raise


def seed_from_env(name: str, *, param: str = "seed_env") -> str:
    """The seed held by an environment variable; unset or empty is an error
    (``--seed "$SECRET"`` with SECRET unset would otherwise run unkeyed)."""
    value = os.environ.get(name)
    if value is None:
        # never echoed: the variable's value given where its name belongs
        # ("$SECRET") may look like any name, a TOTP base32 secret like one
        # in capitals (H82, H83, H85); the user typed the name anyway
        raise InputError("names no environment variable that is set (the name is not "
                         "printed: it may be the key itself)", param=param,
                         expected="the name of a set variable holding at least 128 bits of key "
                                  "material (--seed-env SECRET, not --seed-env \"$SECRET\")")
    if not value:
        raise InputError(f"environment variable {name!r} is empty", param=param,
                         expected="a variable holding at least 128 bits of key material")
    return value


def derive_key(key: bytes, purpose: str) -> bytes:
    """An independent 32-byte key for one purpose ('row-order', 'ids', ...)."""
    if len(key) != 32:
        raise ValueError("key must be 32 bytes")
    return hashlib.sha256(_DERIVE + purpose.encode("ascii") + b"\x00" + key).digest()


def release_key(key: bytes, facts) -> bytes:
    """The key of one release's order and IDs: ``key`` and what the release
    publishes under it (its model and parameters, ``facts``: anything JSON
    can write).  One key with the same facts reproduces a release; with
    other parameters the rows come out in another order under other IDs,
    where they would otherwise line up row by row with the first release's,
    whose sets (or buckets) then intersect."""
    import json
    text = json.dumps(facts, sort_keys=True, default=str, separators=(",", ":"))
    return derive_key(key, "release:" + hashlib.sha256(text.encode()).hexdigest()[:32])


def cell_text_hashes(col) -> np.ndarray:
    """A uint64 hash of each cell's text as every path reads it alike: a
    whole number in decimal whatever its type (:func:`record_id_texts`;
    from 2^53 on, the whole number of the double pandas reads it as),
    booleans as 'True' and 'False', a missing or empty cell as none, and
    text as pandas reads a CSV file's cell (:func:`_read_as_pandas`)."""
    col = pd.Series(col).reset_index(drop=True)
    if len(col) >= _DEDUP_MIN and _few_values(col) and _equal_is_same_text(col):
        # each distinct value once (a cell's hash is its value's alone)
        codes, uniques = pd.factorize(col, use_na_sentinel=True)
        if 4 * len(uniques) <= len(col):
            hashes = np.append(_cell_text_hashes(pd.Series(uniques, dtype=col.dtype)),
                               _MISSING_HASH)
            return hashes[codes]               # code -1 (missing): the last
    return _cell_text_hashes(col)


#: Columns shorter than this are hashed cell by cell.
_DEDUP_MIN = 4096


def _few_values(col: pd.Series) -> bool:
    """Whether a column looks to repeat its values (its first cells, spread
    over the column, hold at most half as many distinct values): a column of
    ids is then hashed cell by cell without a factorize thrown away (H109)."""
    step = max(1, len(col) // 2048)
    sample = col.iloc[::step]
    try:
        return 2 * sample.nunique(dropna=True) <= len(sample)
    except TypeError:                   # unhashable cells (lists): cell by cell
        return False


def _equal_is_same_text(col: pd.Series) -> bool:
    """Whether cells that pandas' factorize takes as one value always key
    alike: numbers, booleans, dates, durations, text and a Categorical's
    codes do; an object column mixing kinds may not (True == 1, keyed 'True'
    and '1')."""
    dt = col.dtype
    if isinstance(dt, pd.CategoricalDtype):
        return True
    if dt == object:
        return pd.api.types.infer_dtype(col, skipna=True) == "string"
    return pd.api.types.is_string_dtype(dt) or pd.api.types.is_bool_dtype(dt) or \
        pd.api.types.is_numeric_dtype(dt) or pd.api.types.is_datetime64_any_dtype(dt) or \
        pd.api.types.is_timedelta64_dtype(dt)


def _cell_text_hashes(col: pd.Series) -> np.ndarray:
    """:func:`cell_text_hashes` cell by cell."""
    if pd.api.types.is_bool_dtype(col.dtype):
        col = col.astype(object).map(str, na_action="ignore")
    elif pd.api.types.is_datetime64_any_dtype(col.dtype):
        col = col.astype(object)
    elif pd.api.types.is_numeric_dtype(col.dtype) and \
            not isinstance(col.dtype, pd.CategoricalDtype):
        # numbers: no cell to read as text (the common column, vectorized)
        miss = col.isna().to_numpy(dtype=bool)
        return _hashed(col[~miss].to_numpy(dtype=object), miss)
    vals = col.to_numpy(dtype=object)
    if len(vals) and pd.api.types.infer_dtype(vals, skipna=True) == "string":
        # text (vectorized): as pandas reads a CSV file's cells, H101
        t = pd.Series(vals, dtype=object)
        from .tables import NA_MARKERS
        miss = (t.isna() | t.isin(NA_MARKERS)).to_numpy(dtype=bool)
        t = t[~miss]
        low = t.str.strip().str.lower()
        t = t.mask(low == "true", "True").mask(low == "false", "False")
        dur = t.str.match(_DURATION_TEXT.pattern).to_numpy(dtype=bool)
        if dur.any():
            t[dur] = [_read_as_pandas(v) for v in t[dur]]
        return _hashed(t.to_numpy(dtype=object), miss)
    # as pandas and Dask read a CSV file that a file's own reader keeps as
    # written (H101: 'NA', 'TRUE', '1.50' and a decimal keyed two releases)
    vals = np.fromiter((_read_as_pandas(v) for v in vals), dtype=object, count=len(vals))
    # (cell by cell: pd.NA and lists have no truth value, H98)
    miss = np.fromiter((v is None or v is pd.NA or v is pd.NaT or
                        (isinstance(v, float) and v != v) or (type(v) is str and not v) or
                        (isinstance(v, (np.datetime64, np.timedelta64)) and np.isnat(v))
                        for v in vals), dtype=bool, count=len(vals))
    return _hashed(vals[~miss], miss)


def _hashed(present: np.ndarray, miss: np.ndarray) -> np.ndarray:
    """:func:`cell_text_hashes` of the cells present (in order) beside the
    missing ones."""
    texts = np.full(len(miss), "\x00missing", dtype=object)
    if len(present):
        kind = pd.api.types.infer_dtype(present, skipna=False)
        numbers = kind in ("integer", "floating", "mixed-integer-float")
        stamps = np.zeros(len(present), dtype=bool) if numbers or kind == "string" else \
            np.fromiter((isinstance(v, (_dt.date, _dt.timedelta, np.datetime64,
                                        np.timedelta64)) for v in present),
                        dtype=bool, count=len(present))
        out = np.empty(len(present), dtype=object)
        if (~stamps).any():
            out[~stamps] = record_id_texts(present[~stamps])[0]
        for i in np.flatnonzero(stamps):
            out[i] = _stamp_text(present[i])
        # text that spells a date or time (a CSV file's) as a stamp is read
        spelled = np.zeros(len(out), dtype=bool) if numbers else \
            pd.Series(out, dtype=object).str.match(_STAMP_TEXT.pattern).to_numpy(bool)
        for i in np.flatnonzero(spelled & ~stamps):
            try:
                out[i] = _stamp_text(out[i])
            except ValueError:
                pass
        texts[~miss] = _big_whole_texts(out, present if numbers else None)
    return _hash_texts(texts)


def _hash_texts(texts: np.ndarray) -> np.ndarray:
    return pd.util.hash_array(texts.astype(str).astype(object),
                              categorize=False).astype(np.uint64)


#: The hash of a missing cell.
_MISSING_HASH = _hash_texts(np.array(["\x00missing"], dtype=object))[0]


def _big_whole_texts(texts: np.ndarray, numbers) -> np.ndarray:
    """Whole numbers of 2^53 or more as the whole number of the double that
    pandas reads them as (a column with a gap is read as floats): an Int64
    column, its digits in a CSV file and the floats pandas reads of that
    file key alike (H103: '9007199254740994.0' and '9007199254740994' keyed
    one table two ways).  Numbers that differ there may key alike."""
    if numbers is not None:
        x = np.asarray(numbers, dtype=np.float64)
        big = np.flatnonzero(np.isfinite(x) & (np.floor(x) == x) & (np.abs(x) >= FLOAT_EXACT))
        values = x[big]
    else:
        # a number of 2^53 or more is written with 16 digits or more, or with
        # an exponent: only such texts are read (in Arrow: H109, a regular
        # expression over every cell of a column of ids cost 0.5 s a million)
        import pyarrow as pa
        import pyarrow.compute as pc
        arr = pa.array(texts, type=pa.large_string())
        cand = pc.or_(pc.greater_equal(pc.utf8_length(arr), 16),
                      pc.match_substring_regex(arr, "[eE]"))
        big = np.flatnonzero(cand.to_numpy(zero_copy_only=False))
        big = big[[bool(_NUM_TEXT.match(texts[i].strip())) for i in big]]
        values = np.array([float(v) for v in texts[big]], dtype=np.float64)
        keep = np.isfinite(values) & (np.floor(values) == values) & \
            (np.abs(values) >= FLOAT_EXACT)
        big, values = big[keep], values[keep]
    if len(big):
        texts = texts.copy()
        texts[big] = [str(int(v)) for v in values]
    return texts


def _read_as_pandas(v):
    """A cell as pandas reads its CSV text: a missing-value marker as
    missing, 'TRUE' and 'true' as True, a decimal as its float, a duration
    ('1 days 00:00:00.000000') as pandas spells it."""
    import decimal

    from .tables import NA_MARKERS          # what pandas reads as missing
    if isinstance(v, str):
        if v in NA_MARKERS:
            return None
        low = v.strip().lower()
        if low in ("true", "false"):
            return "True" if low == "true" else "False"
        if _DURATION_TEXT.match(v):
            try:
                return str(pd.Timedelta(v))
            except ValueError:
                return v
        return v
    if isinstance(v, decimal.Decimal):
        return float(v) if v.is_finite() else None
    return v


#: A duration as pandas writes it ('1 days 00:00:00', '-2 days +03:00:00.5').
_DURATION_TEXT = re.compile(r"^-?\d+ days? [+-]?\d{2}:\d{2}:\d{2}(\.\d+)?$")

#: Text that spells a date or a time of day (as pandas writes them to CSV).
_STAMP_TEXT = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?"
                         r"(Z|[+-]\d{2}:?\d{2})?)?$")


def _stamp_text(v) -> str:
    """A date or time in one spelling whatever the path (H98, H100: a date
    passed through keyed its frame and its CSV apart, which pandas writes
    '2020-01-01' at midnight, with milliseconds or an offset as the column
    needs): the date alone where it is a naive midnight, else ISO with the
    fraction's trailing zeros and a zero fraction left out; a duration as
    pandas spells it."""
    if isinstance(v, (_dt.timedelta, np.timedelta64)):
        return str(pd.Timedelta(v))
    ts = pd.Timestamp(v)
    if ts.tz is None and ts == ts.normalize():
        return ts.strftime("%Y-%m-%d")
    text = ts.isoformat(sep=" ")
    return re.sub(r"\.(\d*?)0+(?=$|[+-])", lambda m: "." + m.group(1) if m.group(1) else "",
                  text)


def frame_digest(frame, columns) -> str:
    """A digest of a table's cells in ``columns``, row by row (what a release
    that is not persistent keys its draws by besides its key, in the
    publishers that read a table whole: one key over one table reproduces
    its release, over another table, a later wave of the same people, the
    draws are another key's)."""
    # each cell by its text as every path reads it (H95: hashed as stored,
    # an int32 column and the CSV of it, or text, keyed two releases)
    h = hashlib.sha256(b"anonset.frame.v2\x00" + len(frame).to_bytes(8, "little"))
    for c in columns:
        h.update(str(c).encode() + b"\x00")
        h.update(np.ascontiguousarray(cell_text_hashes(frame[c]), dtype=np.uint64).tobytes())
    return h.hexdigest()


def key_check(key: bytes) -> str:
    """A persistent key's check value (16 hex digits of a one-way derivation
    of it): a release of a series records it so that a later release drawn
    under another key is refused.  It reveals nothing of the key (a key of
    >= 128 bits; finding one with a given check value is a preimage search
    on SHA-256), nor of any set."""
    return derive_key(key, "key-check")[:8].hex()


def name_stream_ids(names) -> dict:
    """Each attribute's generator stream keyed by its name (31 bits of
    SHA-256), not by its position in the table, so that a column added,
    dropped or moved between releases of a series leaves every other
    column's sets as they were, and one table under one seed gives one
    release however its columns are placed.  Two names that share a stream
    are refused (about one pair in 2^31)."""
    from ..validate import InputError
    ids: dict = {}
    for n in names:
        h = hashlib.sha256(_DERIVE + b"stream\x00" + str(n).encode("utf-8")).digest()
        ids[n] = int.from_bytes(h[:4], "little") & 0x7FFFFFFF
    by_id: dict = {}
    for n, s in ids.items():
        if s in by_id:
            raise InputError(f"columns {by_id[s]!r} and {n!r} share a generator stream",
                             column=n, expected="one of them renamed")
        by_id[s] = n
    return ids


def row_ranks(key: bytes, row0: int, n: int, *, rng: str = "chacha20") -> np.ndarray:
    """Keyed 64-bit ranks of global rows ``row0 .. row0 + n - 1``: a pure
    function of (key, row index), so any chunking gives the same ranks.
    Sorting rows by rank (ties by row index) is a uniformly random order."""
    from ..randomized import _kernels
    if n <= 0:
        return np.zeros(0, dtype=np.uint64)
    # the first 8 bytes (little-endian) of the block at counter row0 + i; one
    # thread: a share of a block's cost that OpenMP's start-up would exceed
    return _kernels.rank_words(derive_key(key, "row-order"), int(row0), 0, 0, int(n),
                               check_rng(rng), n_threads=1)


def shuffled_order(key: bytes, n: int, *, rng: str = "chacha20") -> np.ndarray:
    """A keyed uniformly random permutation of ``range(n)``: position i of the
    output holds input row ``order[i]``."""
    from ..randomized import _kernels
    return _kernels.rank_order(row_ranks(key, 0, n, rng=rng))


_INT_TEXT = re.compile(r"^[+-]?[0-9]+$")
_NUM_TEXT = re.compile(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")
#: 'inf' and 'Infinity', which pandas reads as a float (H130: a CSV's id
#: 'inf' was refused in memory and keyed as text streamed)
_INF_TEXT = re.compile(r"^[+-]?(inf|infinity)$", re.IGNORECASE)


def _as_number(v):
    """The number a record id stands for (an int, or a float that is not
    whole), or None for text that is no number."""
    if isinstance(v, (bool, np.bool_)):
        return None
    if isinstance(v, (numbers.Integral, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return int(f) if f.is_integer() and abs(f) < FLOAT_EXACT else f
    if isinstance(v, decimal.Decimal):
        # a DECIMAL(10, 2) id 7.00 is 7, and 2.50 a fractional id, as the
        # CSV a database writes of it reads (H124: a series redrew its sets)
        if not v.is_finite() or v.adjusted() >= 40:
            return None             # (1E+50000000 as an int never ends: H126)
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, (bytes, bytearray)):
        # text stored as bytes (a Parquet BINARY column without its UTF-8
        # mark, as Hive or Impala write it) is the text it spells (H124)
        try:
            v = bytes(v).decode("utf-8")
        except UnicodeDecodeError:
            return None
    if isinstance(v, str):
        # ' 1000' is 1000, as pandas reads it into memory (H83: a streamed
        # release keyed the text, another stream than the same file's in
        # memory)
        v = v.strip()
        if _INT_TEXT.match(v):
            return int(v)
        if _NUM_TEXT.match(v) or _INF_TEXT.match(v):
            f = float(v)
            return int(f) if f.is_integer() and abs(f) < FLOAT_EXACT else f
    return None


#: A float holds every whole number below 2^53 exactly, and not all above:
#: an id that arrives as a float there may be its neighbour's (H81).
FLOAT_EXACT = 2.0 ** 53


def _id_text(v) -> tuple:
    """(text, fractional) of one record id (:func:`record_id_text`)."""
    if isinstance(v, (bytes, bytearray)):
        try:
            v = bytes(v).decode("utf-8")            # as the text it spells
        except UnicodeDecodeError:
            return str(v), False                    # no number: as it is
    x = _as_number(v)
    # (a number by its value: '2.50' as 2.5, which a fractional record id is
    # refused as, and a pass-through cell keyed as, H101)
    return (str(x) if isinstance(x, (int, float)) else str(v)), isinstance(x, float)


def record_id_text(v) -> str:
    """The text of a record id that every release and every path must agree
    on: a whole number is written in decimal whether it arrives as an int, a
    float (1.0: a column turns float when it has a gap) or text ('0001',
    '1.0' or '1e3' in a CSV read as text, where pandas reads a number);
    other values as they are.  Ids that differ only so ('7' and '007') are
    one id: rows holding both are one record's rows."""
    return _id_text(v)[0]


def record_id_texts(values) -> tuple:
    """(texts, fractional): :func:`record_id_text` of every id, vectorized
    for the common columns (ints, floats, text of digits), and a mask of the
    ids that are fractional numbers."""
    vals = np.asarray(values, dtype=object)
    n = len(vals)
    kind = pd.api.types.infer_dtype(vals, skipna=False) if n else "empty"
    if kind == "integer":
        try:
            return np.asarray(vals, dtype=np.int64).astype(str).astype(object), np.zeros(n, bool)
        except OverflowError:
            pass
    elif kind in ("floating", "mixed-integer-float"):
        x = np.asarray(vals, dtype=np.float64)
        whole = np.isfinite(x) & (np.floor(x) == x) & (np.abs(x) < FLOAT_EXACT)
        out = vals.astype(str).astype(object)
        out[whole] = x[whole].astype(np.int64).astype(str)
        return out, ~whole & ~np.isnan(x)
    elif kind == "string":
        t = pd.Series(vals, dtype=object).str.strip()    # ' 1000' is 1000 (_as_number)
        digits = t.str.fullmatch(r"[0-9]+", na=False).to_numpy(dtype=bool)
        out = vals.copy()
        if digits.any():
            stripped = t[digits].str.lstrip("0")
            out[digits] = stripped.where(stripped != "", "0").to_numpy(dtype=object)
        numlike = t.str.fullmatch(_NUM_TEXT.pattern[1:-1], na=False).to_numpy(dtype=bool) | \
            t.str.fullmatch(_INF_TEXT.pattern[1:-1], case=False, na=False).to_numpy(dtype=bool)
        rest = np.flatnonzero(numlike & ~digits)
        frac = np.zeros(n, bool)
        for k in rest:              # signs, decimals, exponents
            out[k], frac[k] = _id_text(vals[k])
        return out, frac
    out = np.empty(n, dtype=object)
    frac = np.zeros(n, bool)
    for k, v in enumerate(vals):
        out[k], frac[k] = _id_text(v)
    return out, frac


def missing_record_ids(values, *, text: bool) -> np.ndarray:
    """Where a record id is missing, empty or blank.  An empty or blank id
    is a placeholder, not an id: taken as one, it would make every row that
    holds it one record, whose equal values share one set (equal sets would
    then tell equal values)."""
    from ..engine.stats import missing_text
    vals = np.asarray(values, dtype=object)
    miss = missing_text(vals) if text else pd.isna(vals)
    if pd.api.types.infer_dtype(vals, skipna=True) not in ("integer", "floating", "empty"):
        miss = miss | np.fromiter((isinstance(v, str) and not v.strip() for v in vals),
                                  dtype=bool, count=len(vals))
    return miss


def refuse_missing_record_ids(count: int, first: int, *, column: str, file=None):
    """The refusal of missing record ids: how many in the whole table and
    the first one's row, the same in memory, streamed and on Dask."""
    raise InputError(f"has {count:,} missing or empty value(s) (first at {row_name(first)})",
                     param="record_id", column=column, file=file,
                     expected="one stable id per record")


def refuse_narrow_float_ids(dtype, column: str, file=None) -> None:
    """Record ids stored as 16- or 32-bit floats are refused whatever their
    values: such a float holds every whole number only up to 2^11 or 2^24
    (ids 123456789 and 123456791 are both 123456792 in float32, one record
    of two people), and its shortest decimal is not its value above that
    (H99: a Dask series redrew its sets when it read them so)."""
    # the values inside a Categorical or an Arrow dictionary (H100)
    if isinstance(dtype, pd.CategoricalDtype):
        dtype = dtype.categories.dtype
    dtype = getattr(dtype, "pyarrow_dtype", dtype)
    dtype = getattr(dtype, "value_type", dtype)
    name = str(getattr(dtype, "name", dtype)).lower().replace("[pyarrow]", "")
    # (Arrow calls them float and halffloat: named alike on every path)
    name = {"float": "float32", "halffloat": "float16", "half_float": "float16"}.get(name, name)
    if name in ("float16", "float32"):
        raise InputError(f"holds {name} numbers, which cannot hold every whole number past "
                         "2^24 (2^11 for 16 bits): two ids may be one", param="record_id",
                         column=column, file=file,
                         expected="the ids as integers or text (a float64 column of whole "
                                  "numbers is read as integers)")


def checked_record_hashes(values, *, text: bool, column: str, file=None,
                          row0: int = 0) -> np.ndarray:
    """:func:`record_hashes` of ids that must be present and, when numbers,
    whole: a missing id would give unrelated records one id, and a
    fractional one has no text that every release and path agrees on (2.5
    in memory, '2.5' in a CSV)."""
    vals = np.asarray(values, dtype=object)
    miss = missing_record_ids(vals, text=text)
    if miss.any():
        refuse_missing_record_ids(int(miss.sum()), row0 + int(np.flatnonzero(miss)[0]),
                                  column=column, file=file)
    ints = _whole_ints(vals)
    if ints is not None:
        return _mix64(_fnv1a64_decimal(ints))
    kind = pd.api.types.infer_dtype(vals, skipna=True) if len(vals) else "empty"
    if kind in ("datetime64", "datetime", "date", "timedelta64", "timedelta", "time",
                "period"):
        # a date's text is the path's (H92): a frame or Parquet file holds
        # 2020-01-01 00:00:00 where the CSV pandas writes of it holds
        # 2020-01-01, so a series continued on the other path drew new sets
        i = int(np.flatnonzero(pd.notna(vals))[0])
        raise InputError(f"holds dates or times ({vals[i]} at {row_name(row0 + i)}), whose text "
                         "differs between a frame, a Parquet file and a CSV file",
                         param="record_id", column=column, file=file, row=row0 + i,
                         expected="whole numbers or text as record ids (the dates written "
                                  "as text, alike in every release)")
    if kind in ("mixed", "unknown-array"):
        nested = np.fromiter((isinstance(v, (list, tuple, dict, set, frozenset, np.ndarray))
                              for v in vals), dtype=bool, count=len(vals))
        if nested.any():
            # a list's text is the path's (H139: [0, 7] in a frame, [0 7] as
            # the array a file gives): a series continued on the other path
            # drew new sets for two records in three
            i = int(np.argmax(nested))
            raise InputError(f"holds nested values ({type(vals[i]).__name__} at "
                             f"{row_name(row0 + i)}), whose text differs between a frame "
                             "and a file", param="record_id", column=column, file=file,
                             row=row0 + i, expected="whole numbers or text as record ids")
    if kind in ("decimal", "bytes", "mixed"):
        for i, v in enumerate(vals):
            # bytes that are no UTF-8 text would key as their repr, which a
            # text id can spell (H126: two people one record), and a
            # DECIMAL of 40 digits or more is no id any path reads alike
            if isinstance(v, (bytes, bytearray)):
                try:
                    bytes(v).decode("utf-8")
                    continue
                except UnicodeDecodeError:
                    what = "bytes that are not UTF-8 text"
            elif isinstance(v, decimal.Decimal) and (not v.is_finite() or v.adjusted() >= 40):
                what = f"the number {v}, not a whole number below 10^40"
            else:
                continue
            raise InputError(f"holds {what} at {row_name(row0 + i)}", param="record_id",
                             column=column, file=file, row=row0 + i,
                             expected="whole numbers or text as record ids")
    texts, frac = record_id_texts(vals)
    if frac.any():
        i = int(np.argmax(frac))
        v = vals[i]
        shown = str(v.item() if isinstance(v, np.generic) else v)     # '2.5' on every path
        try:
            big = float(v) == int(float(v)) and abs(float(v)) >= FLOAT_EXACT
        except (TypeError, ValueError, OverflowError):
            big = False
        if big:
            # a float above 2^53 may be a neighbour's id: every set of the
            # record would be drawn under another record's stream (H81)
            raise InputError(f"holds the number {shown} at {row_name(row0 + i)} as a float, "
                             "which cannot hold every whole number from 2^53 on: it may be "
                             "another record's id", param="record_id", column=column,
                             file=file, row=row0 + i,
                             expected="the ids as integers or text (a Parquet or pandas "
                                      "column turns float when it has a gap: fill it, or "
                                      "read the ids as text)")
        try:
            finite = math.isfinite(float(v))
        except (TypeError, ValueError, OverflowError):
            finite = True
        raise InputError(f"holds the {'fractional' if finite else 'infinite'} number {shown} "
                         f"at {row_name(row0 + i)}",
                         param="record_id", column=column, file=file, row=row0 + i,
                         expected="whole numbers or text as record ids")
    return _mix64(_fnv1a64(texts))


def _whole_ints(vals):
    """The ids as int64 where they are all Python or NumPy integers (the
    common record id column), else None."""
    if len(vals) == 0 or pd.api.types.infer_dtype(vals, skipna=False) != "integer":
        return None
    try:
        return np.asarray(vals, dtype=np.int64)
    except OverflowError:
        return None


#: 10**k as uint64, k = 0 .. 19
_POW10 = np.array([10 ** k for k in range(20)], dtype=np.uint64)


def _fnv1a64_decimal(x: np.ndarray) -> np.ndarray:
    """:func:`_fnv1a64` of the decimal texts of int64 ids (``str(int)``: a
    '-' then the digits), computed from the numbers: the same hashes without
    making a text a row (0.5 s for a million ids)."""
    x = np.asarray(x, dtype=np.int64)
    neg = x < 0
    u = x.astype(np.uint64)
    with np.errstate(over="ignore"):
        mag = np.where(neg, ~u + np.uint64(1), u)         # |x|, also for -2**63
        ndig = np.ones(len(x), dtype=np.int64)
        for k in range(1, 20):
            ndig += mag >= _POW10[k]
        prime = np.uint64(0x100000001B3)
        h = np.full(len(x), 0xCBF29CE484222325, dtype=np.uint64)
        h = np.where(neg, (h ^ np.uint64(ord("-"))) * prime, h)
        for j in range(int(ndig.max())):
            live = ndig > j
            place = _POW10[np.maximum(ndig - 1 - j, 0)]
            digit = (mag // place) % np.uint64(10) + np.uint64(ord("0"))
            h = np.where(live, (h ^ digit) * prime, h)
        length = (ndig + neg).astype(np.uint64)
        return (h ^ length) * prime


def _fnv1a64(texts) -> np.ndarray:
    """64-bit FNV-1a of each text's UTF-8 bytes, vectorized over rows (a
    fixed function: persistent releases made years apart must agree)."""
    text = np.array([t.encode("utf-8") for t in texts], dtype=object)
    if not len(text):
        return np.zeros(0, dtype=np.uint64)      # an empty block (H41)
    width = max((len(b) for b in text), default=0)
    raw = np.array(text.tolist(), dtype=f"S{max(width, 1)}").view(np.uint8).reshape(len(text), -1)
    lengths = np.fromiter((len(b) for b in text), dtype=np.int64, count=len(text))
    h = np.full(len(text), 0xCBF29CE484222325, dtype=np.uint64)
    prime = np.uint64(0x100000001B3)
    with np.errstate(over="ignore"):
        for j in range(raw.shape[1]):
            live = lengths > j
            h = np.where(live, (h ^ raw[:, j].astype(np.uint64)) * prime, h)
        # the length, so that 'a' and 'a\x00' differ
        h = (h ^ lengths.astype(np.uint64)) * prime
    return h


def _mix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finalizer: a bijection of 64-bit words."""
    x = x.astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


def record_hashes(ids) -> np.ndarray:
    """A fixed 64-bit hash of each stable record identifier (the text of
    :func:`record_id_texts`)."""
    ints = _whole_ints(np.asarray(ids, dtype=object))
    if ints is not None:
        return _mix64(_fnv1a64_decimal(ints))
    return _mix64(_fnv1a64(record_id_texts(ids)[0]))


def record_counters(id_hashes: np.ndarray, codes, salt: int = 0) -> np.ndarray:
    """Persistent-key mode: the generator counter of each record's cell, from
    the record's id hash and its true value's code, so that the same record
    with the same value gets the same set in every release (memoized, as
    RAPPOR's permanent randomized response) and a changed value a fresh,
    independent one.  The counters need not be secret: the cell's randomness
    is ChaCha20 under the secret key at this counter (and the attribute's
    stream); they only need to differ between cells, which a 64-bit mix of
    (id hash, value) does except with probability about n^2 d / 2^64.
    ``salt`` (:func:`cell_salt`): what else the column's sets are drawn
    from; the audit's count of records (0) needs none."""
    codes = np.asarray(codes, dtype=np.int64).astype(np.uint64)
    with np.errstate(over="ignore"):
        return _mix64(np.asarray(id_hashes, dtype=np.uint64)
                      + (codes + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
                      + np.uint64(salt))


def cell_salt(facts) -> int:
    """Persistent-key mode: 64 bits of what a column's sets are drawn from
    besides its record and value (``facts``: its p, eta, d and domain in
    their order; anything JSON can write), added to its cells' counters.
    The same facts give a record the same set in every release; other facts
    read other blocks, so the sets are drawn anew as under another key.
    Without it, a record's cell read the same word under another eta and
    mapped it to a subset of another size, and the two sets shared their
    index (H20: l = 5, then l = 6 on 10 values, C(9, 4) = C(9, 5): 45 % of
    the values pinned, against 1 % for two independent draws)."""
    import json
    text = json.dumps(facts, sort_keys=True, default=str, separators=(",", ":"))
    return int.from_bytes(hashlib.sha256(_DERIVE + b"cells\x00" + text.encode()).digest()[:8],
                          "little")
