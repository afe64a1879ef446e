"""A rough peak-memory estimate of training a config, and the refusal of hopeless sizes before
any work (an estimate, not a measurement)."""

from __future__ import annotations


def estimate_memory_bytes(cfg: dict) -> dict[str, float]:
    """Rough peak memory of training this config, by part (bytes): the data set (generated in
    float64), the parameters with gradients and AdamW state, and the activations kept for the
    backward pass. An estimate for refusing hopeless sizes, not a measurement."""
    d, m = cfg["data"], cfg["model"]
    width = 8 if cfg["dtype"] == "float64" else 4
    b = cfg["batch_size"]
    if cfg["task"] == "rsgn-sequence":
        data = 8.0 * d["n"] * d["length"] * d["dim"] * 2  # generated, then split (a copy)
        n, dh, k = m["n_nodes"], m["d_hidden"], m["n_steps"]
        dense = n * n if m["mode"] == "published" else n * (m["k_nearest"] or n)
        params = dh * dh + 2 * n * m["affinity_rank"] + d["dim"] * dh + dh * d["n_classes"]
        init = 8.0 * (params + 2 * n * n)  # NumPy initialiser (float64) + pairwise distances
        train = width * (4.0 * params + 3.0 * dense * k)  # params, grads, 2 AdamW moments; W
        acts = width * (8.0 * b * n * dh * k + 2.0 * b * d["length"] * n)
        return {"data": data, "parameters": init + train, "activations": acts}
    data = 8.0 * d["n"] * d["dim"] * 2
    sizes = m["layer_sizes"]
    dims = [d["dim"]] + [s[1] for s in sizes]
    params = sum(dims[i] * s[0] + s[1] * s[0] + s[0] * s[0] for i, s in enumerate(sizes))
    acts = width * 4.0 * b * sum(s[0] for s in sizes)
    return {"data": data, "parameters": 3.0 * 8 * params, "activations": acts}


def check_memory(cfg: dict) -> None:
    """Refuse a config whose estimated memory exceeds what the machine has available."""
    from atomspark.sim.memory import format_bytes, require_memory

    parts = estimate_memory_bytes(cfg)
    big = max(parts, key=parts.get)
    hint = {
        "data": "reduce data.n (or data.length, data.dim)",
        "parameters": "reduce model.n_nodes / model.d_hidden (VN: model.layer_sizes)",
        "activations": "reduce batch_size, model.n_nodes or model.d_hidden",
    }[big]
    detail = ", ".join(f"{k} {format_bytes(v)}" for k, v in parts.items())
    require_memory(f"config ({detail})", sum(parts.values()), hint)
