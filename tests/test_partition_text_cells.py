"""msa-anonymize and lgb on a column of numbers holding a stray cell of text
(H105): the column read as text is said (a WARNING naming the file, the
column, the cell and its row), ``--numeric`` refuses it by that cell
and row in one line, alike for CSV and Parquet and in Python; lgb's
eligibility refusals name the input file as msa's and semantic's
refusals of a column's values do."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonset.cli import main
from anonset.validate import InputError

SEED = "00112233445566778899aabbccddeeff"


def _table(n=300, stray=True):
    rng = np.random.default_rng(7)
    df = pd.DataFrame({"age": rng.integers(18, 70, n).astype(str),
                       "sex": rng.choice(["F", "M"], n, p=[0.1, 0.9]),
                       "checks": rng.integers(0, 6, n)})
    if stray:
        df.loc[150, "age"] = "old"
    return df


def _files(tmp_path, df):
    csv, pq = tmp_path / "in.csv", tmp_path / "in.parquet"
    df.to_csv(csv, index=False)
    df.to_parquet(pq, index=False)
    return csv, pq


def _run(capsys, argv):
    capsys.readouterr()
    rc = main(argv)
    return rc, capsys.readouterr().err


MSA = ("msa-anonymize", "--qi", "age,sex", "--sa", "checks", "--k", "5", "--t", "0.4")
LGB = ("lgb", "--qi", "age,sex", "--sensitive", "checks", "--k", "5", "--l", "2")


@pytest.mark.parametrize("cmd", [MSA, LGB], ids=["msa", "lgb"])
def test_a_column_of_numbers_read_as_text_for_one_cell_is_warned_of(tmp_path, capsys, cmd):
    for src in _files(tmp_path, _table()):
        out = tmp_path / f"o_{src.suffix[1:]}.csv"
        rc, err = _run(capsys, [cmd[0], str(src), "-o", str(out), *cmd[1:], "--seed", SEED])
        assert rc == 0, err
        warned = [ln for ln in err.splitlines() if "column 'age'" in ln]
        assert warned == [f"anonset: WARNING: {str(src)!r}: column 'age': holds numbers and "
                          "1 cell of text ('old' at row 151), so it is read as text: "
                          "categories without the numbers' order (a quasi-identifier "
                          "generalized to '*', not to ranges); correct or clear that cell to "
                          "have the column read as numbers"], err
        # a column of words ('sex') and one of numbers only are not warned of
        clean = tmp_path / f"clean{src.suffix}"
        (_table(stray=False).to_csv(clean, index=False) if src.suffix == ".csv"
         else _table(stray=False).to_parquet(clean, index=False))
        rc, err = _run(capsys, [cmd[0], str(clean), "-o", str(out), *cmd[1:], "--seed", SEED])
        assert rc == 0 and "holds numbers and" not in err, err


def test_numeric_refuses_text_by_its_cell_and_row_alike_everywhere(tmp_path, capsys):
    from anonset.partition.msa import MSAProblem
    df = _table()
    lines = []
    for src in _files(tmp_path, df):
        out = tmp_path / "o.csv"
        rc, err = _run(capsys, [MSA[0], str(src), "-o", str(out), *MSA[1:], "--numeric", "age",
                                "--seed", SEED])
        assert rc == 2 and err.count("\n") == 1 and not out.exists(), err
        lines.append(err.replace(str(src), "IN"))
    assert lines[0] == lines[1] == (
        "anonset msa-anonymize: error: 'IN': column 'age': holds the text 'old' at row 151, "
        "but --numeric names it; expected numbers\n")
    for frame in (df, df.astype({"age": "str"}), df.set_axis(range(5, 5 + len(df)))):
        with pytest.raises(InputError) as e:
            MSAProblem(frame, ["age", "sex"], ["checks"], numeric=["age"])
        assert str(e.value) == ("column 'age': holds the text 'old' at row 151, but numeric "
                                "names it; expected numbers")
    # numbers as text throughout: the advice to convert them
    with pytest.raises(InputError, match=r"holds the text '\d+' at row 1, but numeric names "
                                         r"it; expected numbers \(it holds them as text: "
                                         "convert it"):
        MSAProblem(_table(stray=False), ["age", "sex"], ["checks"], numeric=["age"])


def test_lgb_eligibility_refusal_names_the_input_file(tmp_path, capsys):
    df = _table(stray=False).astype({"age": int})
    lines = []
    for src in _files(tmp_path, df):
        out = tmp_path / "o.csv"
        rc, err = _run(capsys, ["lgb", str(src), "-o", str(out), "--qi", "age,checks",
                                "--sensitive", "sex", "--k", "5", "--l", "2", "--seed", SEED])
        assert rc == 2 and err.count("\n") == 1 and not out.exists(), err
        lines.append(err.replace(str(src), "IN"))
    assert lines[0] == lines[1], lines
    assert lines[0].startswith("anonset lgb: error: 'IN': --l: column 'sex': its 300 sensitive "
                               "values are not 2-eligible (value 'M' occurs "), lines[0]
    from anonset.partition.lgb import lgb
    with pytest.raises(InputError, match=r"^l: column 'sex': its 300 sensitive values are not "
                                         "2-eligible"):
        lgb(df, qi=["age", "checks"], sensitive=["sex"], k=5, l=2, seed=SEED)
