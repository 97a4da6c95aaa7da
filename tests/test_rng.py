"""Known-answer tests for the counter-based generators and the key derivation."""
import hashlib

import numpy as np
import pytest

from anonset.randomized import _kernels
from anonset.io.keys import make_key

# RFC 8439, Sec. 2.3.2: key 00..1f, block counter 1, nonce 00:00:00:09 00:00:00:4a 00:00:00:00.
RFC_KEY = bytes(range(32))
RFC_SERIALIZED = bytes.fromhex(
    "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
    "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e")


def test_chacha20_rfc8439_block():
    # state words 12..15 = counter (1), then the nonce as three little-endian words;
    # our (counter64, stream, sub) maps to words (12|13), 14, 15.
    counter = 1 | (0x09000000 << 32)
    out = _kernels.block(RFC_KEY, counter, 0x4a000000, 0)
    assert out.astype("<u4").tobytes() == RFC_SERIALIZED


def test_chacha20_matches_cryptography():
    cryptography = pytest.importorskip("cryptography")
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
    rng = np.random.default_rng(1)
    for _ in range(20):
        key = rng.bytes(32)
        ctr = int(rng.integers(0, 2**63))
        stream, sub = (int(v) for v in rng.integers(0, 2**32, size=2))
        nonce = ctr.to_bytes(8, "little") + stream.to_bytes(4, "little") + sub.to_bytes(4, "little")
        ks = Cipher(algorithms.ChaCha20(key, nonce), mode=None).encryptor().update(bytes(64))
        assert _kernels.block(key, ctr, stream, sub).astype("<u4").tobytes() == ks


def test_philox4x64_matches_numpy():
    # numpy's Philox (4x64-10) increments its counter before producing a block
    key = np.array([0x1234567890ABCDEF, 0x0FEDCBA987654321], dtype=np.uint64)
    ctr = np.array([7, 0, 0, 0], dtype=np.uint64)
    bg = np.random.Philox(key=key, counter=ctr)
    expected = bg.random_raw(4)
    got = _kernels.philox4x64(np.array([8, 0, 0, 0], dtype=np.uint64), key)
    np.testing.assert_array_equal(got, expected)


def test_fill_is_blockwise_and_thread_invariant():
    key = make_key(5, research_seed=True)
    for rng in ("chacha20", "philox"):
        one = _kernels.fill(key, 100, 3, 0, 257, rng=rng, n_threads=1)
        two = _kernels.fill(key, 100, 3, 0, 257, rng=rng, n_threads=2)
        np.testing.assert_array_equal(one, two)
        np.testing.assert_array_equal(one[16 * 5:16 * 6], _kernels.block(key, 105, 3, 0, rng=rng))


def test_every_simd_level_gives_the_same_blocks():
    # the portable, AVX2 (8 lanes) and AVX-512 (16 lanes) block functions,
    # whichever this CPU runs, over counts that leave partial groups of lanes
    key = make_key(9, research_seed=True)
    levels = _kernels.SIMD_LEVELS[:_kernels.SIMD_LEVELS.index(_kernels.simd_level()) + 1]
    for nblocks in (1, 7, 8, 15, 16, 17, 64, 100):
        ref = np.concatenate([_kernels.block(key, 2**32 - 3 + b, 5, 1) for b in range(nblocks)])
        for level in levels:
            got = _kernels.fill(key, 2**32 - 3, 5, 1, nblocks, simd=level, n_threads=2)
            np.testing.assert_array_equal(got, ref, err_msg=f"{level}, {nblocks} blocks")
    with pytest.raises(ValueError, match="simd"):
        _kernels.fill(key, 0, 0, 0, 1, simd="sse9")


def test_blocks_at_arbitrary_counters_equal_single_blocks():
    # the retries of rejected draws: lanes at unrelated counters (repeats,
    # the 2^32 carry, partial groups of lanes), at every SIMD level
    key = make_key(11, research_seed=True)
    levels = _kernels.SIMD_LEVELS[:_kernels.SIMD_LEVELS.index(_kernels.simd_level()) + 1]
    rs = np.random.default_rng(3)
    for n in (0, 1, 5, 8, 9, 16, 17, 40):
        ctr = rs.integers(0, 2**63, n, dtype=np.uint64)
        ctr[:n // 3] = 2**32 - 1
        for rng in ("chacha20", "philox"):
            ref = np.concatenate([_kernels.block(key, int(c), 7, 2, rng=rng) for c in ctr]
                                 or [np.empty(0, np.uint32)])
            for level in levels:
                got = _kernels.blocks_at(key, ctr, 7, 2, rng=rng, simd=level)
                np.testing.assert_array_equal(got, ref, err_msg=f"{rng} {level} {n}")


def test_blocks_differ_by_stream_and_sub():
    key = make_key(0, research_seed=True)
    blocks = {tuple(_kernels.block(key, 1, s, t)) for s in range(4) for t in range(4)}
    assert len(blocks) == 16


def test_make_key():
    assert len(make_key()) == 32 and make_key() != make_key()
    assert make_key(1, research_seed=True) == make_key(1, research_seed=True) != make_key(2, research_seed=True)
    assert make_key("1", research_seed=True) != make_key(1, research_seed=True) \
        != make_key(b"\x01", research_seed=True)
    # pinned: the key derivation must not change silently between versions
    assert make_key(42, research_seed=True).hex() == hashlib.sha256(
        b"anonset.key.v1\x00i" + (42).to_bytes(1, "little")).hexdigest()
    with pytest.raises(ValueError, match="seed"):
        make_key(-1, research_seed=True)
    with pytest.raises(ValueError, match="seed"):
        make_key(1.5)
    # a seed is key material: at least 128 bits unless research_seed=True
    for short in ("", b"", 0, 1, 2 ** 100, "a" * 31, b"x" * 15):
        with pytest.raises(ValueError, match=r"^seed: .*expected at least 128 bits"):
            make_key(short)
    for long in ("d1f3a8c04e9b27f65a0c3e81b7d9f246", bytes.fromhex("9c1e7b3f05d2a84e6f1b0c9d3a7e5f28"),
                 2 ** 127 + 0x9C1E7B3F05D2A84E, np.int64(5) * 0 + 2 ** 62):
        if isinstance(long, np.integer):
            assert len(make_key(long, research_seed=True)) == 32      # NumPy ints are ints
        else:
            assert len(make_key(long)) == 32
    # ... and random-looking: a long seed of one or two repeated symbols is refused
    for dull in ("a" * 32, b"x" * 16, bytes(16), 2 ** 127, "ab" * 40, "abcde" * 8):
        with pytest.raises(ValueError, match=r"^seed: .*distinct symbol"):
            make_key(dull)
        assert len(make_key(dull, research_seed=True)) == 32
    # ... and not a pattern: the example seed documents show (it was in this
    # project's README), a block written twice, symbols in sequence
    for pattern, why in (("0123456789abcdef" * 2, "repeats a block of 16 symbols"),
                         ("fedcba9876543210" * 2, "repeats a block of 16 symbols"),
                         ("k3Y!" "9qZ@" "m2W#" "p7X$" * 2, "repeats a block of 16 symbols"),
                         ("abcdefghijklmnopqrstuvwxyz012345", "in sequence"),
                         (bytes(range(16)), "in sequence"),
                         (0xF123456789ABCDEF0123456789ABCDEF, "in sequence")):
        with pytest.raises(ValueError, match=r"^seed: got a seed of \d+ bits that .*" + why):
            make_key(pattern)
        assert len(make_key(pattern, research_seed=True)) == 32


def test_a_guessable_research_seed_is_recorded_as_one():
    """research_seed=True let a long but guessable seed through (the
    documents' example, one symbol) and the metadata recorded key: 'seed',
    so the audit said nothing; only a short one was recorded (H31).  Every
    seed the checks would refuse is recorded as the research run's."""
    import pandas as pd
    import anonset
    from anonset.io.keys import key_mode
    for weak in ("0123456789abcdef" * 2, "a" * 32, 7, "abc"):
        assert key_mode(weak, research_seed=True) == "research-seed", weak
    assert key_mode("d1f3a8c04e9b27f65a0c3e81b7d9f246", research_seed=True) == "seed"
    assert key_mode("d1f3a8c04e9b27f65a0c3e81b7d9f246") == "seed" and key_mode(None) == "os"
    df = pd.DataFrame({"a": list("xyzw") * 25, "b": list("uvw" * 33 + "u")})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a", "b"],
                          seed="0123456789abcdef" * 2, research_seed=True)
    assert pub.info["key"] == "research-seed"
    rep = anonset.audit(pub)
    assert ((rep.checks["check"] == "key") & (rep.checks["status"] == "risk")).any()


def test_random_key_material_is_never_taken_for_a_pattern(tmp_path):
    """The pattern checks refuse what people type, never what a generator
    draws: 20,000 draws of every kind a user may pass are accepted."""
    import secrets
    from anonset.io.keys import read_key_file, seed_pattern
    for _ in range(20_000):
        for s in (secrets.token_hex(16), secrets.token_bytes(16), secrets.token_urlsafe(24),
                  secrets.randbits(128) | 1 << 127, secrets.token_hex(32)):
            assert seed_pattern(s) is None, s
    # a key file is checked alike (the README's old example, one line)
    f = tmp_path / "k.key"
    f.write_text("0123456789abcdef0123456789abcdef\n")
    f.chmod(0o600)
    with pytest.raises(ValueError, match=r"holds 32 bytes and repeats a block of 16 symbols"):
        read_key_file(f)
    f.write_text(secrets.token_hex(32) + "\n")
    assert len(read_key_file(f)) == 64
