"""A release of several files is one unit (trial H13, 2026-11-29): LGB's
bucket tables, semantic diversity's rows and msa's report were each moved
into place on their own, so an interrupt, a full disk or a second run left
a new table beside an old release's other files (which the audit passed),
and LGB removed an input named as an old bucket table."""
from __future__ import annotations

import errno
import os
import signal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import anonset
from anonset.cli import main
from anonset.io import atomic as A

SEED = "d1f3a8c04e9b27f65a0c3e81b7d9f246"


def _files(d: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


def _old_and_new(d: Path):
    (d / "a.csv").write_text("old-a")
    (d / "a.csv.json").write_text("old-j")
    return {"a.csv": b"old-a", "a.csv.json": b"old-j"}


def test_a_failure_between_two_moves_puts_the_old_files_back(tmp_path, monkeypatch):
    old = _old_and_new(tmp_path)
    real, calls = os.replace, []

    def replace(a, b):
        calls.append(b)
        real(a, b)
        if len(calls) == 1:                 # right after the first move
            raise KeyboardInterrupt

    monkeypatch.setattr(A.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        with A.Outputs() as outs:
            outs.path(tmp_path / "a.csv").write_text("new-a")
            outs.path(tmp_path / "a.csv.json").write_text("new-j")
    assert _files(tmp_path) == old               # no temporaries, no backups either


def test_an_interrupt_while_moving_is_handled_after_every_file_moved(tmp_path, monkeypatch):
    """A signal any thread receives raises in the main thread at the next
    instruction: between two moves, it left a new metadata file beside the
    old table.  It is held until the release is in place."""
    _old_and_new(tmp_path)
    real = os.replace

    def replace(a, b):
        real(a, b)
        os.kill(os.getpid(), signal.SIGINT)      # Ctrl-C during the moves

    monkeypatch.setattr(A.os, "replace", replace)
    # Python's own Ctrl-C handler, whatever this process inherited (a
    # background job starts with SIGINT ignored)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with A.Outputs() as outs:
                outs.path(tmp_path / "a.csv").write_text("new-a")
                outs.path(tmp_path / "a.csv.json").write_text("new-j")
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)
    assert _files(tmp_path) == {"a.csv": b"new-a", "a.csv.json": b"new-j"}


def test_a_full_disk_names_the_output_and_changes_nothing(tmp_path):
    old = _old_and_new(tmp_path)
    with pytest.raises(OSError) as e:
        with A.Outputs() as outs:
            outs.path(tmp_path / "a.csv").write_text("new-a")
            outs.path(tmp_path / "a.csv.json")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert e.value.filename == str(tmp_path / "a.csv") and e.value.errno == errno.ENOSPC
    assert _files(tmp_path) == old


def test_an_output_that_is_not_a_regular_file_is_refused(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(anonset.InputError, match="is not a regular file"):
        with A.Outputs() as outs:
            outs.path(fifo)
    assert fifo.exists() and not fifo.is_file()
    with pytest.raises(anonset.InputError, match="asked for twice"):
        with A.Outputs() as outs:
            outs.path(tmp_path / "x.csv")
            outs.path(tmp_path / "." / "x.csv")
    assert not list(tmp_path.glob("*x.csv*"))


def _lgb_args(src, out, seed=SEED):
    return ["lgb", str(src), "-o", str(out), "--k", "3", "--l", "2", "--qi", "city",
            "--sensitive", "job,disease", "--identifier", "id", "--drop", "note",
            "--seed", seed]


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(2)
    n = 600
    df = pd.DataFrame({"id": np.arange(n), "city": rng.choice(list("wxyz"), n),
                       "job": rng.choice(list("abcdef"), n), "note": rng.choice(["u", "v"], n),
                       "disease": rng.choice(["flu", "cold", "none", "asthma"], n)})
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    return src


def test_lgb_replaces_a_release_whole_or_not_at_all(table, tmp_path, monkeypatch):
    from anonset.partition import output
    d = tmp_path / "rel"
    d.mkdir()
    assert main(_lgb_args(table, d / "l.csv", SEED)) == 0
    old = _files(d)
    assert {"l.csv", "l.csv.anonset.json", "l.job.idt.csv", "l.disease.sat.csv"} <= set(old)
    real, written = output._to_csv, []

    def to_csv(frame, tmp, path):           # the disk fills on the third table
        written.append(path)
        if len(written) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(frame, tmp, path)

    monkeypatch.setattr(output, "_to_csv", to_csv)
    assert main(_lgb_args(table, d / "l.csv", "0f1e2d3c4b5a69788796a5b4c3d2e1f0")) == 2
    assert _files(d) == old                  # the old release, every file of it


def test_lgb_refuses_to_remove_an_input_named_as_an_old_bucket_table(table, tmp_path, capsys):
    d = tmp_path / "rel"
    d.mkdir()
    assert main(_lgb_args(table, d / "l.csv")) == 0
    src = d / "l.disease.idt.csv"            # the new run's input, under that name
    src.write_bytes(table.read_bytes())
    before = _files(d)
    argv = _lgb_args(src, d / "l.csv")
    argv[argv.index("job,disease")] = "job"
    argv[argv.index("note")] = "note,disease"
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "l.disease.idt.csv" in err and "inputs are never removed" in err, err
    assert _files(d) == before


def test_msa_and_semantic_write_their_second_output_with_the_release(table, tmp_path,
                                                                      monkeypatch):
    """msa's report and semantic diversity's rows were written after the
    release was in place: a failure there left a new release beside the
    old report or rows."""
    import json
    d = tmp_path / "rel"
    d.mkdir()
    msa = ["msa-anonymize", str(table), "-o", str(d / "m.csv"), "--report", str(d / "r.json"),
           "--k", "3", "--t", "0.6", "--qi", "city", "--sa", "job", "--identifier", "id",
           "--drop", "note,disease", "--seed", SEED]
    sem = ["semantic-anonymize", str(table), "-o", str(d / "s.csv"), "--rows",
           str(d / "rows.csv"), "--sensitive", "disease", "--l", "2", "--d", "1", "--qids",
           "city", "--identifier", "id", "--drop", "note,job", "--domain",
           "flu,cold,none,asthma", "--seed", SEED]
    assert main(msa) == 0 and main(sem) == 0
    old = _files(d)
    real = json.dumps

    def dumps(obj, *a, **k):                 # msa's report fails
        if isinstance(obj, dict) and "n_classes" in obj:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(obj, *a, **k)

    monkeypatch.setattr(json, "dumps", dumps)
    assert main(msa[:-1] + ["0f1e2d3c4b5a69788796a5b4c3d2e1f0"]) == 2
    monkeypatch.undo()
    from anonset.cli import args as cli_args
    real_frame = cli_args.write_frame

    def write_frame(*a, **k):                # the rows: written, then the disk fills
        real_frame(*a, **k)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cli_args, "write_frame", write_frame)
    assert main(sem[:-1] + ["0f1e2d3c4b5a69788796a5b4c3d2e1f0"]) == 2
    monkeypatch.undo()
    assert _files(d) == old


def test_one_directory_spelt_two_ways_is_locked_once(tmp_path, monkeypatch):
    """The moves lock each target's directory: a directory named once by an
    absolute path and once as '.' was locked twice, and the second lock
    waited on the first for good (H17), with the signals held."""
    import threading
    monkeypatch.chdir(tmp_path)
    done = []

    def write():
        with A.Outputs() as outs:
            outs.path(tmp_path / "a.csv").write_text("a")
            outs.path(Path("b.json")).write_text("b")
            outs.path(Path("sub/../c.txt")).write_text("c")
        done.append(True)

    (tmp_path / "sub").mkdir()
    t = threading.Thread(target=write, daemon=True)
    t.start()
    t.join(20)
    assert done, "the moves waited on their own lock"
    assert _files(tmp_path) == {"a.csv": b"a", "b.json": b"b", "c.txt": b"c"}


def test_an_unwritable_folder_names_the_output_not_the_temporary(tmp_path, monkeypatch):
    """H144: a read-only output folder was refused at the end as
    "'ro/.o.csv.anonset-NNN.tmp' Permission denied", naming anonset's
    temporary file and not what was expected.  The folder is refused
    before any work, naming the output; a write or a move refused later
    names the output too."""
    target = tmp_path / "o.csv"
    real = os.access
    monkeypatch.setattr(A.os, "access",
                        lambda p, m, **k: False if Path(p) == tmp_path else real(p, m, **k))
    with pytest.raises(anonset.InputError) as e:
        A.check_targets(target)
    assert str(e.value) == (f"{str(target)!r}: output: is in a folder this user may not write "
                            f"in ({str(tmp_path)!r}); expected a folder this user may write in")
    monkeypatch.undo()

    def touch(self, *a, **k):
        raise PermissionError(errno.EACCES, "Permission denied", str(self))
    with monkeypatch.context() as m:
        m.setattr(Path, "touch", touch)
        with pytest.raises(anonset.InputError) as e:
            with A.Outputs() as outs:
                outs.path(target)
    assert str(e.value) == (f"{str(target)!r}: cannot be written (Permission denied); "
                            "expected a folder this user may write in")

    def replace(a, b):
        raise PermissionError(errno.EACCES, "Permission denied", str(a), None, str(b))
    with monkeypatch.context() as m:
        m.setattr(A.os, "replace", replace)
        with pytest.raises(anonset.InputError) as e:
            with A.Outputs() as outs:
                outs.path(target).write_text("x")
    assert "anonset-" not in str(e.value) and str(target) in str(e.value)
    assert list(tmp_path.iterdir()) == []
    # an error that is not the output's stays as it was (H143)
    with pytest.raises(TimeoutError):
        with A.Outputs() as outs:
            outs.path(target).write_text("x")
            raise TimeoutError(errno.ETIMEDOUT, "timed out")
    assert list(tmp_path.iterdir()) == []


def test_another_users_file_in_a_sticky_folder_is_refused_first(tmp_path, monkeypatch):
    """H148: in a shared folder (mode 1777) a file of another user cannot be
    replaced: the move failed after all the work, left a backup link the
    user could not remove, and blamed the folder.  Refused before any
    work, naming the cause."""
    import os
    from anonset.io import atomic
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    (shared / "o.csv").write_text("someone's release\n")
    owner = (shared / "o.csv").stat().st_uid
    monkeypatch.setattr(os, "geteuid", lambda: owner + 4242)     # another user
    with pytest.raises(ValueError, match=r"is another user's file in a shared folder"):
        atomic._check_target(shared / "o.csv", [])
    atomic._check_target(shared / "new.csv", [])                 # a new name is fine
    monkeypatch.setattr(os, "geteuid", lambda: owner)            # the owner may replace it
    atomic._check_target(shared / "o.csv", [])


def test_a_read_only_file_system_is_named_as_such(tmp_path, monkeypatch):
    """An output folder on a read-only file system (a read-only bind mount)
    was refused as "a folder this user may not write in", blaming the
    user's permissions; the cause is named."""
    target = tmp_path / "o.csv"
    _read_only_folder(monkeypatch, tmp_path)
    with pytest.raises(anonset.InputError) as e:
        A.check_targets(target)
    assert str(e.value) == (f"{str(target)!r}: output: is in a folder on a read-only file "
                            f"system ({str(tmp_path)!r}); expected a folder on a file system "
                            "that is not read-only")
    assert list(tmp_path.iterdir()) == []


def _read_only_folder(monkeypatch, ro: Path) -> None:
    """``ro`` as a folder on a read-only file system (a read-only mount)."""
    real_access, real_statvfs = os.access, os.statvfs

    class RO:
        def __init__(self, st):
            self.st = st

        def __getattr__(self, name):
            return getattr(self.st, name)

        @property
        def f_flag(self):
            return self.st.f_flag | os.ST_RDONLY
    monkeypatch.setattr(A.os, "access", lambda p, m, **k: False if Path(p) == ro
                        else real_access(p, m, **k))
    monkeypatch.setattr(A.os, "statvfs", lambda p: RO(real_statvfs(p)) if Path(p) == ro
                        else real_statvfs(p))


def test_an_output_on_a_read_only_file_system_is_refused_before_any_work(tmp_path,
                                                                          monkeypatch, capsys):
    """H157: `anonset audit pub.parquet -o ro/audit.csv` printed the whole
    audit, then refused its folder (reconstruct ran its estimate, and its
    bootstrap, first); docs/cli.md says such an output is an error before
    any work.  keygen on a read-only file system expected "a directory you
    can write" and now names the cause as every output does."""
    df = pd.DataFrame({"a": np.random.default_rng(0).choice(list("wxyz"), 200)})
    pub = anonset.publish(df, anonset.Diversity(2), sensitive=["a"], seed=SEED)
    pub.to_parquet(tmp_path / "pub.parquet")
    ro = tmp_path / "ro"
    ro.mkdir()
    _read_only_folder(monkeypatch, ro)
    capsys.readouterr()
    words = ("is in a folder on a read-only file system ({!r}); expected a folder on a file "
             "system that is not read-only").format(str(ro))
    assert main(["audit", str(tmp_path / "pub.parquet"), "-o", str(ro / "a.csv")]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err == (f"anonset audit: error: {str(ro / 'a.csv')!r}: -o: "
                                         f"{words}\n"), cap
    from anonset.io import stream

    def no_work(*a, **k):
        raise AssertionError("the reconstruction ran before its output was refused")
    monkeypatch.setattr(stream, "reconstruct_file", no_work)
    assert main(["reconstruct", str(tmp_path / "pub.parquet"), "--attributes", "a", "--se",
                 "5", "-o", str(ro / "ct.csv")]) == 2
    assert capsys.readouterr().err == (f"anonset reconstruct: error: {str(ro / 'ct.csv')!r}: "
                                       f"-o: {words}\n")
    assert main(["audit", str(tmp_path / "pub.parquet"), "--attack", "--plot",
                 str(ro / "a.png")]) == 2
    assert f"--plot: {words}" in capsys.readouterr().err
    # the Python report too, before its page is built
    from anonset.audit.html import build

    def no_page(*a, **k):
        raise AssertionError("the page was built before its output was refused")
    monkeypatch.setattr(build, "open_release", no_page)
    with pytest.raises(anonset.InputError, match=r"output: is in a folder on a read-only"):
        anonset.report(tmp_path / "pub.parquet", ro / "r.html")
    from anonset.io import keys

    def rofs(path):
        raise OSError(errno.EROFS, "Read-only file system", str(path))
    monkeypatch.setattr(keys, "new_key_file", rofs)
    assert main(["keygen", str(ro / "k.key")]) == 2
    assert capsys.readouterr().err == (
        f"anonset keygen: error: {str(ro / 'k.key')!r}: cannot be written (Read-only file "
        "system); expected a new file in a folder on a file system that is not read-only\n")
    assert list(ro.iterdir()) == []
