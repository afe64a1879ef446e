"""Host syncs, host-to-device copies and device operations of the torch path, counted on the
stand-in device of the tests (tests/standin_device.py: CUDA's rules applied to CPU data).

Counted: one 5-sample VN settle (2 layers, 16 + 8 atoms) with the stand-in test's settings and
with compare's float64 settings, and one RSGN training step of each built-in config (published:
rsgn-sequence.toml, sparse: rsgn-sparse.toml, batch 32). A count is exact, not timed, so the
machine's load does not change it. `--baseline COMMIT` also counts the code as it was at COMMIT
(vn_torch.py and training._rsgn_step read with `git show`), for the before/after in docs/gpu.md.

    python benchmarks/gpu_host_syncs.py --baseline 09efb9f --out docs/results/gpu
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import types
from pathlib import Path

import harness
import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from atomspark.networks.datasets import sparse_dictionary_data  # noqa: E402
from atomspark.networks.rsgn.plasticity import PlasticityConfig, RewardBaseline  # noqa: E402
from atomspark.networks.torch_path import training  # noqa: E402
from atomspark.networks.torch_path import vn_torch as vn_now  # noqa: E402
from atomspark.networks.torch_path.convert import vn_to_torch  # noqa: E402
from atomspark.networks.vn.model import VNModel  # noqa: E402
from standin_device import CudaRules, standin_device  # noqa: E402

SETTLES = {
    "stand-in test settle (float64, tol 1e-5, max_iter 200, sweeps 8)": {
        "tol": 1e-5,
        "max_iter": 200,
        "sweeps": 8,
    },
    "compare settle (float64, tol 1e-10, max_iter 5000, sweeps 200)": {
        "tol": 1e-10,
        "max_iter": 5000,
        "sweeps": 200,
    },
}
STEPS = 3


def _git_module(commit: str, path: str, name: str) -> types.ModuleType:
    src = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{commit}:{path}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    mod = types.ModuleType(name)
    sys.modules[name] = mod
    exec(compile(src, f"{commit}:{path}", "exec"), mod.__dict__)
    return mod


def count_settle(vn_module, settings: dict) -> dict:
    vn = VNModel.random(12, [(16, 8), (8, 6)], lam=0.1, seed=0)
    x = torch.from_numpy(sparse_dictionary_data(n=5, dim=12, n_atoms=12, active=2, seed=1).signals)
    ref = vn_to_torch(vn)
    model = vn_module.TorchVN(list(ref.S), list(ref.U), ref.lam)
    with CudaRules() as rules:
        model = model.to(standin_device())
        with torch.no_grad():
            res = vn_module.settle(model, x, **settings)
    return {"host_syncs": rules.n_syncs, "device_ops": rules.ops, "sweeps": res.sweeps}


def count_rsgn_step(step_fn, config: str, baseline_kind: str) -> dict:
    cfg = training.load_config(ROOT / "scenarios" / "configs" / config)
    x_tr, y_tr, _, _, extra = training.build_data(cfg)
    per_step = []
    with CudaRules() as rules:
        dev = standin_device()
        module = training.build_model(cfg, x_tr.shape[-1], extra, dev, torch.float32)
        opt = torch.optim.AdamW(module.parameters(), lr=cfg["optimizer"]["lr"])
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
        p = cfg["plasticity"]
        baseline = (
            RewardBaseline() if baseline_kind == "host" else training.DeviceRewardBaseline(dev)
        )
        slow = {
            "history": [],
            "pcfg": PlasticityConfig(lr_affinity=p["lr_affinity"], lr_threshold=p["lr_threshold"]),
            "baseline": baseline,
        }
        xb = torch.from_numpy(x_tr[:32]).to(dev, torch.float32)
        yb = torch.from_numpy(y_tr[:32]).to(dev)
        for _ in range(STEPS):
            before = (rules.n_syncs, rules.n_h2d, rules.ops)
            step_fn(module, opt, sched, xb, yb, cfg, slow)
            per_step.append(
                {
                    "host_syncs": rules.n_syncs - before[0],
                    "host_to_device_copies": rules.n_h2d - before[1],
                    "device_ops": rules.ops - before[2],
                }
            )
    return {"config": config, "batch": 32, "steps": per_step}


def _old_rsgn_step(commit: str):
    """The _rsgn_step function of `commit`, with the names it used then."""
    from atomspark.networks.rsgn import plasticity
    from atomspark.networks.torch_path import convert, device

    src = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{commit}:networks/torch_path/training.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    body = src[src.index("def _rsgn_step(") : src.index("def _structural_update(")]
    ns = {
        "torch": torch,
        "np": np,
        "rsgn_from_torch": convert.rsgn_from_torch,
        "hebbian_affinity_update": plasticity.hebbian_affinity_update,
        "homeostatic_thresholds": plasticity.homeostatic_thresholds,
        "autocast_context": device.autocast_context,
    }
    exec(compile(body, f"{commit}:training.py", "exec"), ns)
    return ns["_rsgn_step"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", help="also count the code at this commit")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "gpu")
    args = ap.parse_args()
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    old_vn = (
        None
        if args.baseline is None
        else _git_module(args.baseline, "networks/torch_path/vn_torch.py", "old_vn_torch")
    )
    old_step = None if args.baseline is None else _old_rsgn_step(args.baseline)
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": head,
        "baseline_commit": args.baseline,
        "torch": torch.__version__,
        "load_1min": os.getloadavg()[0],
        "settle": [],
        "rsgn_step": [],
    }
    for name, settings in SETTLES.items():
        row = {"settle": name, "now": count_settle(vn_now, settings)}
        if old_vn is not None:
            row["baseline"] = count_settle(old_vn, settings)
        result["settle"].append(row)
        print(name, row)
    for mode, config in (("published", "rsgn-sequence.toml"), ("sparse", "rsgn-sparse.toml")):
        row = {"mode": mode, "now": count_rsgn_step(training._rsgn_step, config, "device")}
        if old_step is not None:
            row["baseline"] = count_rsgn_step(old_step, config, "host")
        result["rsgn_step"].append(row)
        print(mode, row)
    path = harness.write_result(args.out, "host_syncs", result)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
