"""Reference traces of Lava's own sigma-delta ProcessModels (lava.proc.sdn Sigma, Delta,
SigmaDelta on Loihi2SimCfg, fixed_pt and floating_pt), one small network per case, covering each
option: ReLU and unit activation, bias, vth, cumulative error, state and spike exponents, graded
spikes through Dense and a recurrent Sparse, 32-bit wraps. Runs in the Python 3.10 Lava
environment; tests/test_sigma_delta.py replays the recording on the event engine, and its
lava-marked test runs this again and compares with the recording.

    .venv-lava/bin/python benchmarks/sigma_delta_lava_reference.py \
        --out tests/data/sigma_delta/lava_reference.npz

Network of a case: RingBuffer (graded input, `n_in` x steps) -> Dense (W_in, weight_exp_in,
24-bit messages) -> n sigma-delta units, plus a recurrent Sparse (W_rec, weight_exp_rec) from
the units to themselves. Saved per case `<name>.<key>`: per step (steps, n) s_out, sigma, act,
residue, error (Lava's variables after the step), and the input data and weights.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

VARS = ("sigma", "act", "residue", "error")
STEPS = 24


def _case(name, arithmetic, kind, seed, n=6, n_in=4, in_scale=100, w_scale=60, exp_in=0,
          exp_rec=0, recurrent=True, **params) -> dict:  # fmt: skip
    """One case's network, drawn from `seed`: fixed point uses 8-bit even weights (mixed signs,
    as Lava keeps them) and integer graded inputs; float uses Gaussian ones."""
    rng = np.random.default_rng(seed)
    active = rng.random((n_in, STEPS)) < 0.4
    if arithmetic == "fixed":
        data = rng.integers(-in_scale, in_scale + 1, (n_in, STEPS)) * active
        w_in = 2 * rng.integers(-w_scale // 2, w_scale // 2 + 1, (n, n_in))
        w_rec = 2 * rng.integers(-w_scale // 4, w_scale // 4 + 1, (n, n)) * recurrent
    else:
        data = rng.normal(0.0, in_scale, (n_in, STEPS)) * active
        w_in = rng.normal(0.0, w_scale, (n, n_in))
        w_rec = rng.normal(0.0, w_scale / 4, (n, n)) * recurrent
    return dict(name=name, arithmetic=arithmetic, n=n, data=data, w_in=w_in, w_rec=w_rec,
                exp_in=exp_in, exp_rec=exp_rec, params=dict(kind=kind, **params))  # fmt: skip


def cases() -> list[dict]:
    """The recorded cases (names are unique; each covers the options in its name)."""
    rng = np.random.default_rng(7)
    return [
        _case(
            "fixed_relu_bias_exps",
            "fixed",
            "sigma_delta",
            1,
            act="relu",
            vth=3,
            bias=rng.integers(-40, 41, 6),
            spike_exp=3,
            state_exp=2,
            exp_in=-2,
            exp_rec=-3,
        ),
        _case(
            "fixed_unit_cum_error",
            "fixed",
            "sigma_delta",
            2,
            act="unit",
            vth=25,
            bias=rng.integers(-300, 301, 6),
            cum_error=True,
            state_exp=3,
            exp_rec=-6,
        ),
        _case(
            "fixed_sigma_wraps",
            "fixed",
            "sigma",
            3,
            in_scale=2**22,
            w_scale=250,
            exp_in=7,
            recurrent=False,
        ),
        _case(
            "fixed_delta_cum_error_exps",
            "fixed",
            "delta",
            4,
            vth=7,
            cum_error=True,
            spike_exp=2,
            state_exp=1,
            recurrent=False,
        ),
        _case("fixed_delta_vth0", "fixed", "delta", 5, vth=0, recurrent=False),
        _case(
            "float_relu_cum_error",
            "float",
            "sigma_delta",
            6,
            in_scale=1.0,
            w_scale=0.5,
            act="relu",
            vth=0.2,
            bias=rng.normal(0.0, 0.5, 6),
            cum_error=True,
            spike_exp=1,
        ),
        _case(
            "float_unit_bias",
            "float",
            "sigma_delta",
            8,
            in_scale=1.0,
            w_scale=0.5,
            act="unit",
            vth=0.05,
            bias=rng.normal(0.0, 0.5, 6),
        ),
        _case(
            "float_delta", "float", "delta", 9, in_scale=1.0, w_scale=0.5, vth=0.3, recurrent=False
        ),
        _case("float_sigma", "float", "sigma", 10, in_scale=1.0, w_scale=0.5, recurrent=False),
    ]


def run_case(case: dict) -> dict[str, np.ndarray]:
    """Run one case on Loihi2SimCfg; returns its per-step records (keys: s_out and VARS)."""
    from lava.magma.core.run_conditions import RunSteps
    from lava.magma.core.run_configs import Loihi2SimCfg
    from lava.proc.dense.process import Dense
    from lava.proc.io.source import RingBuffer
    from lava.proc.monitor.process import Monitor
    from lava.proc.sdn.process import ActivationMode, Delta, Sigma, SigmaDelta
    from lava.proc.sparse.process import Sparse

    fixed = case["arithmetic"] == "fixed"
    n, par = case["n"], dict(case["params"])
    kind = par.pop("kind")
    if kind == "sigma":
        unit = Sigma(shape=(n,))
    elif kind == "delta":
        unit = Delta(shape=(n,), **par)
    else:
        par["act_mode"] = ActivationMode.RELU if par.pop("act") == "relu" else ActivationMode.UNIT
        unit = SigmaDelta(shape=(n,), **par)
    dtype = np.int32 if fixed else np.float64
    source = RingBuffer(data=case["data"].astype(dtype))
    dense = Dense(weights=case["w_in"].astype(dtype), weight_exp=case["exp_in"],
                  num_message_bits=24)  # fmt: skip
    source.s_out.connect(dense.s_in)
    dense.a_out.connect(unit.a_in)
    if np.any(case["w_rec"]):
        import scipy.sparse as sp

        rec = Sparse(weights=sp.csr_matrix(case["w_rec"].astype(dtype)),
                     weight_exp=case["exp_rec"], num_message_bits=24)  # fmt: skip
        unit.s_out.connect(rec.s_in)
        rec.a_out.connect(unit.a_in)
    names = [v for v in VARS if hasattr(unit, v)]
    monitors = {}
    for var in names:
        monitors[var] = Monitor()
        monitors[var].probe(getattr(unit, var), STEPS)
    monitors["s_out"] = Monitor()
    monitors["s_out"].probe(unit.s_out, STEPS)
    tag = "fixed_pt" if fixed else "floating_pt"
    try:
        unit.run(condition=RunSteps(num_steps=STEPS), run_cfg=Loihi2SimCfg(select_tag=tag))
        out = {}
        for var, mon in monitors.items():
            got = np.asarray(mon.get_data()[unit.name][var]).reshape(STEPS, n)
            out[var] = got.astype(np.int64 if fixed else np.float64)
    finally:
        unit.stop()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    saved: dict[str, np.ndarray] = {"steps": np.array(STEPS)}
    for case in cases():
        for key, val in run_case(case).items():
            saved[f"{case['name']}.{key}"] = val
        print(f"{case['name']}: {int(np.count_nonzero(saved[case['name'] + '.s_out']))} events")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, **saved)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
