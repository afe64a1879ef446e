"""Crafted model, input and data files, each run through the CLI in its own process: every one is
refused in one line (exit 2) before any kernel sees it; a signal (segfault), a traceback, a hang
or a silent success fails the test. Files are crafted here, in tmp_path."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from atomspark.networks import rsgn
from atomspark.networks.model_io import load_npy
from atomspark.networks.vn import VNModel
from atomspark.sim.core import AtomsparkError

META = "__atomspark_meta__"


def _rewrite(src: Path, dst: Path, arrays=None, meta=None) -> Path:
    with np.load(src) as d:
        arrs = {k: d[k] for k in d.files}
    m = json.loads(arrs.pop(META).tobytes())
    if arrays:
        arrays(arrs)
    if meta:
        m = meta(m)
    arrs[META] = np.frombuffer(json.dumps(m).encode(), np.uint8)
    np.savez(dst, **arrs)
    return dst


def _set(key, pos, value):
    def edit(arrs):
        arrs[key] = arrs[key].copy()
        arrs[key][pos] = value

    return edit


def _header_only(src: Path, dst: Path, member: str, shape) -> Path:
    """Copy of `src` whose `member` is a bare header declaring `shape` (no data)."""
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w") as zo:
        for name in zi.namelist():
            blob = zi.read(name)
            if name == member:
                buf = io.BytesIO()
                header = {"descr": "<f8", "fortran_order": False, "shape": shape}
                np.lib.format.write_array_header_1_0(buf, header)
                blob = buf.getvalue()
            zo.writestr(name, blob)
    return dst


def _with_junk(src: Path, dst: Path, declared: int = 500_000_000) -> Path:
    """`src` plus a deflated member whose header declares `declared` float64 values (4 GB);
    only a few MB are written: refusing it must not read it at all."""
    shutil.copy(src, dst)
    with zipfile.ZipFile(dst, "a", compression=zipfile.ZIP_DEFLATED) as z:
        with z.open("junk.npy", "w", force_zip64=True) as fh:
            header = {"descr": "<f8", "fortran_order": False, "shape": (declared,)}
            np.lib.format.write_array_header_1_0(fh, header)
            for _ in range(4):
                fh.write(bytes(1 << 20))
    return dst


@pytest.fixture(scope="module")
def crafted(tmp_path_factory) -> dict[str, tuple[Path, str | None]]:
    """name -> (model file, --input file or None)."""
    d = tmp_path_factory.mktemp("crafted")
    vn, rs = d / "vn.npz", d / "rsgn.npz"
    VNModel.random(6, [(5, 4)], seed=0).save(vn)
    cfg = rsgn.RSGNConfig(
        mode="sparse", n_nodes=16, d_hidden=4, d_in=3, n_classes=2, n_steps=2, k_nearest=3
    )
    rsgn.save_model(rs, rsgn.init_params(cfg, 0), cfg)
    n_edges = 16 * 3
    files = {
        "rsgn negative index": _rewrite(rs, d / "a.npz", _set("graph_indices", n_edges - 1, -5)),
        "rsgn index = n_nodes": _rewrite(rs, d / "b.npz", _set("graph_indices", n_edges - 1, 16)),
        "rsgn index 10**6": _rewrite(rs, d / "c.npz", _set("graph_indices", 0, 10**6)),
        "rsgn indptr past end": _rewrite(rs, d / "e.npz", _set("graph_indptr", 3, 10**6)),
        "rsgn indptr end short": _rewrite(rs, d / "f.npz", _set("graph_indptr", -1, n_edges - 1)),
        "rsgn config a list": _rewrite(rs, d / "g.npz", meta=lambda m: {**m, "config": [1]}),
        "rsgn threshold_bounds 5": _rewrite(
            rs, d / "h.npz", meta=lambda m: {**m, "config": {**m["config"], "threshold_bounds": 5}}
        ),
        "rsgn n_nodes 10**12": _rewrite(
            rs, d / "i.npz", meta=lambda m: {**m, "config": {**m["config"], "n_nodes": 10**12}}
        ),
        "vn dtype bool": _rewrite(vn, d / "j.npz", meta=lambda m: {**m, "dtype": "bool"}),
        "vn dtype <U3": _rewrite(vn, d / "k.npz", meta=lambda m: {**m, "dtype": "<U3"}),
        "vn dtype object": _rewrite(vn, d / "l.npz", meta=lambda m: {**m, "dtype": "object"}),
        "vn metadata a list": _rewrite(vn, d / "m.npz", meta=lambda m: [1, 2]),
        "vn metadata a string": _rewrite(vn, d / "n.npz", meta=lambda m: "vn"),
        "vn n_layers 10**9": _rewrite(vn, d / "o.npz", meta=lambda m: {**m, "n_layers": 10**9}),
        "vn lam a string": _rewrite(vn, d / "p.npz", meta=lambda m: {**m, "lam": "x"}),
        "vn task without seed": _rewrite(
            vn, d / "q.npz", meta=lambda m: {**m, "task": {"task": "vn-dictionary", "data": {}}}
        ),
        "vn atoms 1e300": _rewrite(vn, d / "r.npz", _set("S_0", 0, 1e300)),
        "vn header (10**9, 12)": _header_only(vn, d / "s.npz", "S_0.npy", (10**9, 12)),
        "vn plus 4 GB junk member": _with_junk(vn, d / "t.npz"),
    }
    out = {name: (path, None) for name, path in files.items()}
    np.save(d / "big.npy", np.full((2, 6), 1e300))
    np.save(d / "intmax.npy", np.full((2, 6), 2**31 - 1, dtype=np.int64))
    with open(d / "hdr.npy", "wb") as fh:
        header = {"descr": "<f8", "fortran_order": False, "shape": (10**9, 12)}
        np.lib.format.write_array_header_1_0(fh, header)
    out["input 1e300"] = (vn, str(d / "big.npy"))
    out["input INT_MAX"] = (vn, str(d / "intmax.npy"))
    out["input header (10**9, 12)"] = (vn, str(d / "hdr.npy"))
    return out


PROBES = [
    ("rsgn negative index", "graph indices: must lie in [0, 16)"),
    ("rsgn index = n_nodes", "graph indices: must lie in [0, 16)"),
    ("rsgn index 10**6", "graph indices: must lie in [0, 16)"),
    ("rsgn indptr past end", "indptr: must start at 0 and never decrease"),
    ("rsgn indptr end short", "indptr ends at"),
    ("rsgn config a list", "'config' must be a mapping"),
    ("rsgn threshold_bounds 5", "threshold_bounds must be a [low, high] pair"),
    ("rsgn n_nodes 10**12", "indptr: needs"),
    ("vn dtype bool", "dtype must be one of"),
    ("vn dtype <U3", "dtype must be one of"),
    ("vn dtype object", "dtype must be one of"),
    ("vn metadata a list", "metadata must be a mapping"),
    ("vn metadata a string", "metadata must be a mapping"),
    ("vn n_layers 10**9", "n_layers = 1000000000"),
    ("vn lam a string", "lam must be a list"),
    ("vn task without seed", "no valid seed"),
    ("vn atoms 1e300", "beyond the 3.4e+38 that float32 holds"),
    ("vn header (10**9, 12)", "truncated"),
    ("vn plus 4 GB junk member", "unknown arrays 'junk.npy'"),
    ("input 1e300", "beyond the 8.39e+06"),
    ("input INT_MAX", "beyond the 8.39e+06"),
    ("input header (10**9, 12)", "truncated"),
]


def run_cli(argv: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    """The CLI in its own process (a crash there cannot take pytest down)."""
    code = "import sys; from atomspark.scenarios.cli.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=timeout
    )


def assert_one_line_refusal(proc: subprocess.CompletedProcess, needle: str) -> None:
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}: {proc.stderr[-500:]}"
    assert proc.returncode == 2, f"exit {proc.returncode} (not refused): {proc.stderr[-500:]}"
    err = proc.stderr.strip()
    assert "Traceback" not in err and err.count("\n") == 0, err
    assert needle in err, err


@pytest.mark.parametrize(("probe", "needle"), PROBES, ids=[p for p, _ in PROBES])
def test_crafted_file_is_refused_in_one_line_by_the_cli(crafted, tmp_path, probe, needle):
    model, inputs = crafted[probe]
    out = tmp_path / "out"
    argv = ["profile", str(model), "--input", inputs or "builtin:2", "--out", str(out)]
    assert_one_line_refusal(run_cli(argv), needle)
    assert not out.exists()


def test_npy_loader_refuses_before_allocating(tmp_path):
    path = tmp_path / "x.npy"
    with open(path, "wb") as fh:
        header = {"descr": "<f8", "fortran_order": False, "shape": (10**9, 12)}
        np.lib.format.write_array_header_1_0(fh, header)
        fh.write(bytes(100))
    with pytest.raises(AtomsparkError, match=r"truncated .* 96000000000 bytes; the file holds 100"):
        load_npy(path, "--input")
    np.save(path, np.array(["a", "b"]))
    with pytest.raises(AtomsparkError, match="holds <U1 values"):
        load_npy(path, "--input")
    np.save(path, np.arange(6.0).reshape(2, 3), allow_pickle=False)
    assert load_npy(path, "--input").tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
