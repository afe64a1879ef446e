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
else per-step SHA-256 digests of v and u; `vnonzero_i` per step (count), plus the input. A
sigma-delta layer saves sigma, act and residue instead (a Sigma layer sigma only).

A sigma-delta (SDNN) network with an input layer is run as lava-dl's PilotNet SDNN tutorial runs
it: `hdf5.Network(skip_layers=1)` (netx leaves its input Delta's port unconnected) fed by Lava's DeltaEncoder
(vth = the input layer's vThMant, spike_exp 6, PyDeltaEncoderModelDense) from a RingBuffer of
--frames surrogate frames (pixels of a U[0, 1] image shifted one column per frame, the tutorial
transform 2*w*x - w + b cast to int32), the last frame held until --steps. Saved per layer:
`sigma_i`, `act_i`, `residue_i` (digests `<var>sha_i` above --full-limit units; a Sigma layer
has sigma only), `sigmanonzero_i`, the distinct frames `input_frames` (int8, (x, y, c) order)
with `input_frame_index` (the frame of each step), and digests of the encoder's act per step.

lava-dl's netx imports slayer and its sequential modules, which import torch; netx's network
building uses neither. Without torch in the Lava environment, `--stub-torch-imports` registers
empty modules for those two imports (slayer's RF `neuron_params`, used only for RF neurons,
then raises).
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
    ap.add_argument("--frames", type=int, default=6, help="SDNN: distinct surrogate frames")
    ap.add_argument("--stub-torch-imports", action="store_true")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.stub_torch_imports:
        _stub_torch_imports()

    import h5py
    from lava.lib.dl import netx

    with h5py.File(args.net, "r") as f:
        first = f["layer/0"]
        kind = np.asarray(first["type"][()]).reshape(-1)[0]
        sdnn = "neuron" in first and first["neuron/type"][()] in (b"SDNN", "SDNN")
    if sdnn and kind in (b"input", "input"):  # fed through the tutorial's delta encoder
        _run_sdnn(args)
        return

    from lava.magma.core.run_conditions import RunSteps
    from lava.magma.core.run_configs import Loihi2SimCfg
    from lava.proc import io

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
    probes = _probe_layers(net.layers, args.steps)
    try:
        net.run(RunSteps(num_steps=args.steps), Loihi2SimCfg(select_tag="fixed_pt"))
        _collect(probes, args.steps, args.full_limit, saved)
    finally:
        net.stop()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, **saved)
    print(f"wrote {args.out}: {len(net.layers)} layers, {args.steps} steps")


def _layer_vars(neuron) -> tuple[str, ...]:
    """The state a layer's neuron is compared on: LIF v, u; SigmaDelta sigma, act, residue;
    Sigma sigma. The first one also gets a nonzero count per step."""
    if hasattr(neuron, "v"):
        return ("v", "u")
    return ("sigma", "act", "residue") if hasattr(neuron, "act") else ("sigma",)


def _probe_layers(layers, steps: int) -> list:
    """One Monitor per layer and variable: (layer index, layer, var, monitor)."""
    from lava.proc.monitor.process import Monitor

    probes = []
    for i, layer in enumerate(layers):
        for var in _layer_vars(layer.neuron):
            m = Monitor()
            m.probe(getattr(layer.neuron, var), steps)
            probes.append((i, layer, var, m))
    return probes


def _collect(probes, steps: int, full_limit: int, saved: dict) -> None:
    """`<var>_i` (steps, units) up to full_limit units, else per-step digests `<var>sha_i`; and
    `<first var>nonzero_i`."""
    for i, layer, var, m in probes:
        n = int(np.prod(layer.shape))
        arr = np.asarray(m.get_data()[layer.neuron.name][var]).reshape(steps, n)
        if n <= full_limit:
            saved[f"{var}_{i}"] = arr.astype(np.int64)
        else:
            saved[f"{var}sha_{i}"] = np.array([digest(r) for r in arr])
        if var == _layer_vars(layer.neuron)[0]:
            saved[f"{var}nonzero_{i}"] = np.count_nonzero(arr, axis=1)


def _stub_torch_imports() -> None:
    """Empty modules (their __file__ the real one, which Lava's model search reads) for netx's
    two torch-importing imports."""
    import importlib.util
    import os
    import sys
    import types

    def rf_params(*_a, **_k):
        raise RuntimeError("RF neurons need lava-dl's slayer (torch)")

    dl = list(importlib.util.find_spec("lava.lib.dl").submodule_search_locations)
    dl_dir = next(d for d in dl if os.path.isdir(os.path.join(d, "netx")))
    files = {
        "lava.lib.dl.slayer": "slayer/__init__.py",
        "lava.lib.dl.slayer.neuron": "slayer/neuron/__init__.py",
        "lava.lib.dl.slayer.neuron.rf": "slayer/neuron/rf.py",
        "lava.lib.dl.netx.sequential_modules": "netx/sequential_modules.py",
    }
    for name, rel in files.items():
        mod = types.ModuleType(name)
        mod.__file__ = os.path.join(dl_dir, rel)
        sys.modules[name] = mod
    sys.modules["lava.lib.dl.slayer.neuron.rf"].neuron_params = rf_params


def surrogate_frames(
    shape_whc: tuple[int, int, int], frames: int, steps: int, w: int, b: int, seed: int
) -> np.ndarray:
    """(steps, W, H, C) int32 frames: a U[0, 1] image shifted one column (W) per frame, the
    tutorial's transform int32(2 w x - w + b), the last frame held to the end."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.0, 1.0, shape_whc)
    out = []
    for t in range(steps):
        x = np.roll(base, min(t, frames - 1), axis=0)
        out.append((2 * w * x - w + b).astype(np.int32))
    return np.stack(out)


def _run_sdnn(args) -> None:
    from lava.lib.dl import netx
    from lava.magma.core.run_conditions import RunSteps
    from lava.magma.core.run_configs import Loihi2SimCfg
    from lava.proc import io
    from lava.proc.monitor.process import Monitor

    net = netx.hdf5.Network(net_config=args.net, skip_layers=1)
    cfg0 = net.net_config["layer"][0]
    w = int(cfg0["weight"]) if "weight" in cfg0.keys() else 64
    b = int(cfg0["bias"]) if "bias" in cfg0.keys() else 0
    shape = tuple(int(s) for s in net.inp.shape)  # (W, H, C)
    frames = surrogate_frames(shape, args.frames, args.steps, w, b, args.seed)
    source = io.source.RingBuffer(data=np.moveaxis(frames, 0, -1))
    encoder = io.encoder.DeltaEncoder(shape=shape, vth=int(cfg0["neuron"]["vThMant"]), spike_exp=6)
    source.s_out.connect(encoder.a_in)
    encoder.s_out.connect(net.inp)
    index = np.minimum(np.arange(args.steps), args.frames - 1)
    flat = frames.reshape(args.steps, -1)
    assert flat.min() >= -128 and flat.max() <= 127
    saved: dict[str, np.ndarray] = {
        "steps": np.array(args.steps),
        "input_frame_index": index,
        "input_frames": flat[: args.frames].astype(np.int8),
    }
    m_enc = Monitor()
    m_enc.probe(encoder.act, args.steps)
    probes = _probe_layers(net.layers, args.steps)
    cfg = Loihi2SimCfg(
        select_tag="fixed_pt",
        exception_proc_model_map={io.encoder.DeltaEncoder: io.encoder.PyDeltaEncoderModelDense},
    )
    try:
        net.run(RunSteps(num_steps=args.steps), cfg)
        enc = np.asarray(m_enc.get_data()[encoder.name]["act"]).reshape(args.steps, -1)
        saved["encoder_actsha"] = np.array([digest(r) for r in enc])
        _collect(probes, args.steps, args.full_limit, saved)
    finally:
        net.stop()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, **saved)
    print(f"wrote {args.out}: SDNN, {len(net.layers)} layers after the encoder, {args.steps} steps")


if __name__ == "__main__":
    main()
