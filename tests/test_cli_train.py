"""`atomspark train` without a TOML for small changes (--set, --epochs, --device), its closing
table, and progress as whole lines when the output is not a terminal."""

from __future__ import annotations

import io
import json

import pytest
from atomspark.scenarios.cli.main import _toml_value, main, parse_setting
from atomspark.sim.core import AtomsparkError
from atomspark.sim.progress import PlainProgress, progress

SMALL = ["--set", "data.n=60", "--set", "batch_size=16", "--set", "model.n_nodes=16"]


@pytest.mark.torch
def test_builtin_config_with_overrides_needs_no_toml(tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "run"
    argv = ["train", "rsgn-sparse", "--epochs", "1", "--device", "cpu", *SMALL, "--out", str(out)]
    assert main(argv) == 0
    captured = capsys.readouterr()
    final = json.loads((out / "final_metrics.json").read_text())
    assert final["numerics"]["device"] == "cpu"
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in rows if r["type"] == "eval"] == [1]
    assert sum(r["type"] == "step" for r in rows) == 3  # 48 training samples / batch 16
    summary = captured.out[captured.out.index("[train] done") :]
    assert "{" not in summary and "[" not in summary.replace("[train]", "")  # no raw dicts/lists
    assert "best accuracy" in summary and "validation loss" in summary
    assert "\r" not in captured.err  # not a terminal: whole lines, no redrawn bar


@pytest.mark.torch
@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--set", "epochs"], "--set 'epochs': expected KEY=VALUE"),
        (["--set", "model.n_nodez=4"], "model.n_nodez"),
        (["--set", "optimizer.lr=-1"], "'optimizer.lr': must be finite and > 0"),
        (["--epochs", "0"], "--epochs: must be >= 1"),
        (["--set", "data.n.x=3"], "--set 'data.n.x': 'n' is a value, not a table"),
    ],
)
def test_bad_overrides_are_one_line_and_write_nothing(tmp_path, capsys, extra, needle):
    pytest.importorskip("torch")
    out = tmp_path / "run"
    assert main(["train", "rsgn-sparse", *extra, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and needle in err, err
    assert not out.exists()


@pytest.mark.parametrize("value", [3, 1e-3, True, "sparse", "cuda:0", [1, 2], "two words"])
def test_a_printed_setting_reads_back_as_the_same_value(value):
    """The resume command printed after Ctrl-C repeats each --set; it must mean the same."""
    assert parse_setting(f"k={_toml_value(value)}") == ("k", value)


def test_plain_progress_prints_whole_lines_with_count_and_eta():
    stream = io.StringIO()
    bar = progress(10, "[job]", "step", file=stream)
    assert isinstance(bar, PlainProgress)  # a StringIO is not a terminal
    bar.every_s = 0.0
    with bar:
        for _ in range(4):
            bar.update(1)
        bar.set_postfix(loss="0.5")
        bar.update(1)
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue() and len(lines) == 5  # closing adds no repeat
    assert lines[0].startswith("[job] 1/10 step (10 %)") and "ETA" in lines[0]
    assert lines[-1].endswith("loss 0.5")


def test_disabled_progress_prints_nothing():
    stream = io.StringIO()
    with progress(3, "[job]", enabled=False, file=stream) as bar:
        bar.update(3)
        bar.write("hidden")
    assert stream.getvalue() == ""


def test_unknown_setting_text_is_kept_as_text():
    assert parse_setting("model.mode=sparse") == ("model.mode", "sparse")
    with pytest.raises(AtomsparkError, match="expected KEY=VALUE"):
        parse_setting("=3")
