"""Reference traces of a netx network from lava-dl itself: `netx.hdf5.Network` on Lava's
bit-accurate CPU models (Loihi2SimCfg, select_tag 'fixed_pt'). Runs in the Python 3.10 Lava
environment with lava-dl importable; tests/test_netx_import.py replays the same network and
input on the event engine and compares, step by step and bit for bit.

    PYTHONPATH=<lava-dl 0.6.0 and its imports> .venv-lava/bin/python \
        benchmarks/netx_lava_reference.py tests/data/netx/mnist.net --steps 24 \
        --out tests/data/netx/mnist_lava_reference.npz

Input: a network without an input layer gets seeded random spikes (probability --rate) on its
first Dense through a RingBuffer; a network with an input layer gets a surrogate image as the
input layer's bias_mant (pixels ~ U[0, 1], netx PilotNet tutorial transform 2*w*x - w + b, cast
to int32), written into the file so the engine side uses the same integers. With --notebook-bias
the image is instead assigned as the benchmark notebook does (`neuron.bias = image`), which sets
a plain Python attribute and leaves bias_mant at 0.

Saved per layer i: `v_i`, `u_i` (steps, units) when the layer has at most --full-limit units,
else per-step SHA-256 digests of v and u; `spikes_i` per step (count), plus the input.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import numpy as np


def digest(arr: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(arr, dtype=np.int64).tobytes()).hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("net")
    ap.add_argument("--steps", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rate", type=float, default=0.2)
    ap.add_argument("--notebook-bias", action="store_true")
    ap.add_argument("--full-limit", type=int, default=5000)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    from lava.lib.dl import netx
    from lava.magma.core.run_conditions import RunSteps
    from lava.magma.core.run_configs import Loihi2SimCfg
    from lava.proc import io
    from lava.proc.monitor.process import Monitor

    net = netx.hdf5.Network(net_config=args.net)
    rng = np.random.default_rng(args.seed)
    saved: dict[str, np.ndarray] = {"steps": np.array(args.steps)}
    source = None
    first = net.layers[0]
    if isinstance(first, netx.blocks.process.Input):
        w, b = first.transform["weight"], first.transform["bias"]
        x = rng.uniform(0.0, 1.0, first.shape[::-1][1:] + first.shape[-1:])  # (H, W, C)
        image = (2 * w * x - w + b).astype(np.int32).transpose([1, 0, 2])  # (W, H, C)
        if args.notebook_bias:
            first.neuron.bias = image  # what benchmark.ipynb does: no Var is changed
            saved["input_bias"] = np.zeros(image.shape, np.int64).reshape(-1)
        else:
            first.neuron.bias_mant.init = image
            saved["input_bias"] = image.astype(np.int64).reshape(-1)
    else:
        n_in = net.inp.shape[0]
        spikes = (rng.random((n_in, args.steps)) < args.rate).astype(np.int64)
        source = io.source.RingBuffer(data=spikes)
        source.s_out.connect(net.inp)
        saved["input_spikes"] = spikes.T.copy()  # (steps, units)
    monitors = []
    for layer in net.layers:
        pair = []
        for var in ("v", "u"):
            m = Monitor()
            m.probe(getattr(layer.neuron, var), args.steps)
            pair.append(m)
        monitors.append(pair)
    try:
        net.run(RunSteps(num_steps=args.steps), Loihi2SimCfg(select_tag="fixed_pt"))
        for i, (layer, (mv, mu)) in enumerate(zip(net.layers, monitors)):
            n = int(np.prod(layer.shape))
            v = np.asarray(mv.get_data()[layer.neuron.name]["v"]).reshape(args.steps, n)
            u = np.asarray(mu.get_data()[layer.neuron.name]["u"]).reshape(args.steps, n)
            if n <= args.full_limit:
                saved[f"v_{i}"], saved[f"u_{i}"] = v.astype(np.int64), u.astype(np.int64)
            else:
                saved[f"vsha_{i}"] = np.array([digest(r) for r in v])
                saved[f"usha_{i}"] = np.array([digest(r) for r in u])
            saved[f"vnonzero_{i}"] = np.count_nonzero(v, axis=1)
    finally:
        net.stop()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, **saved)
    print(f"wrote {args.out}: {len(net.layers)} layers, {args.steps} steps")


if __name__ == "__main__":
    main()
