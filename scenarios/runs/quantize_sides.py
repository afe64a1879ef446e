"""Each model family's fixed-point export (`atomspark export --fixed`), by family name: how its
graph is quantised, how the quantisation's error is measured and logged, which share of its
decisions `--verify` holds to --min-agreement, and whether its Lava bundle has the split layout
(`--layout`). Registered here explicitly with
`register_quantize_side` (the built-ins below; a new family from its own module)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
from atomspark.sim.core import AtomsparkError
from atomspark.sim.graph import Graph


@dataclass(frozen=True)
class QuantizeSide:
    """quantize(model, graph, samples, steps, frac_bits, log, split_w_h, per_target_w) ->
    (integer graph, quantisation report as a dict), logged in one line; agreement: (report key,
    how the --verify message names it): the share on which the integer model keeps the float
    model's decisions; measured_over(n_samples, steps): what the error is measured over;
    split_layout: its Lava export can be written in the split layout (mapping/lava/rsgn_split);
    split_classifier(model): the parameters its split bundle's readout takes (cls_w, cls_b,
    ln_gain, ln_bias; mapping/split_readout.py); split_stream(model, bundle, samples): the
    samples through a split bundle (mapping/lava/split_stream.run_stream's StreamResult, its
    NumPy reference, which equals Lava bit for bit)."""

    quantize: Callable[..., tuple[Graph, dict]]
    agreement: tuple[str, str]
    measured_over: Callable[[int, int], str]
    split_layout: bool = False
    split_classifier: Callable[[object], object] | None = None
    split_stream: Callable[[object, object, np.ndarray], object] | None = None


_SIDES: dict[str, QuantizeSide] = {}


def register_quantize_side(family: str, side: QuantizeSide) -> QuantizeSide:
    """Make `side` the fixed-point export of the family called `family`."""
    known = _SIDES.get(family)
    if known is not None and known is not side:
        raise AtomsparkError(f"register_quantize_side: {family!r} has a fixed-point export")
    _SIDES[family] = side
    return side


def quantize_side(family: str) -> QuantizeSide:
    """The fixed-point export of the family called `family`; none is an AtomsparkError."""
    side = _SIDES.get(family)
    if side is None:
        raise AtomsparkError(f"--fixed: model family {family!r} has no fixed-point export")
    return side


def has_split_layout(family: str) -> bool:
    """Whether the family's Lava export has the split layout."""
    side = _SIDES.get(family)
    return side is not None and side.split_layout


def split_classifier(family: str, model):
    """The readout parameters of a split bundle of `model` (None: the family has none)."""
    side = _SIDES.get(family)
    return None if side is None or side.split_classifier is None else side.split_classifier(model)


def split_stream(family: str, model, bundle, samples: np.ndarray):
    """`samples` through the split bundle `bundle` of `model` (None: the family has no stream)."""
    side = _SIDES.get(family)
    return (
        None
        if side is None or side.split_stream is None
        else side.split_stream(model, bundle, samples)
    )


def _rsgn_stream(model, bundle, samples: np.ndarray):
    from atomspark.mapping.lava.split_stream import run_stream

    return run_stream(bundle, *model, samples)


def _quantize_vn(
    model, graph: Graph, samples: np.ndarray, steps: int, frac_bits: int, log,
    split_w_h: bool = False, per_target_w: bool = False,
) -> tuple:  # fmt: skip
    """The integer VN graph and its report over `steps` steps of the exported graph."""
    if split_w_h:
        raise AtomsparkError("--split-w-h: only RSGN models have a W_h (this is a VN model)")
    if per_target_w:
        raise AtomsparkError("--per-target-w: only for RSGN models (this is a VN model)")
    from atomspark.mapping.quantize import quantize_vn_graph, vn_quantization_report

    fixed_graph = quantize_vn_graph(graph, frac_bits=frac_bits)
    report = vn_quantization_report(graph, fixed_graph, steps)
    log(
        f"[export] quantised to Loihi fixed point ({frac_bits} fraction bits): code error max "
        f"{report.code_max_abs_error:.3g}, mean {report.code_mean_abs_error:.3g}, active-set "
        f"agreement {report.active_set_agreement:.3f}, wraps {report.wraps}, clips {report.clips}"
    )
    return fixed_graph, asdict(report)


def _quantize_rsgn(
    model, graph: Graph, samples: np.ndarray, steps: int, frac_bits: int, log,
    split_w_h: bool = False, per_target_w: bool = False,
) -> tuple:  # fmt: skip
    """The integer RSGN graph and its report over all samples, each the model's K + 1 steps."""
    from atomspark.mapping.quantize import quantize_rsgn_graph, rsgn_quantization_report

    params, config = model
    fixed_graph = quantize_rsgn_graph(graph, split_w_h, per_target_w)
    r = rsgn_quantization_report(params, config, samples, split_w_h, per_target_w)
    weights = "8-bit weights, W_h in two 8-bit parts" if split_w_h else "8-bit weights"
    weights += ", W's exponent per target node" if per_target_w else ""
    log(
        f"[export] quantised to Loihi fixed point (alpha Q.12, h Q.10, {weights}), float vs "
        f"integer engine on {r.samples} sample(s) x {r.steps} steps: same class "
        f"{r.decision_agreement:.3f}, score error max {r.score_max_abs_error:.3g} (max |score| "
        f"{r.score_max_abs:.3g}), alpha error max {r.alpha_max_abs_error:.3g}, h error max "
        f"{r.h_max_abs_error:.3g} (max |h| {r.h_max_abs:.3g}), active-set agreement "
        f"{r.active_set_agreement:.3f}, wraps {r.wraps}, clips {r.clips}"
    )
    return fixed_graph, asdict(r)


register_quantize_side(
    "vn",
    QuantizeSide(
        _quantize_vn,
        ("active_set_agreement", "active atoms agree with float on"),
        lambda n_samples, steps: f"{steps} steps",
    ),
)
register_quantize_side(
    "rsgn",
    QuantizeSide(
        _quantize_rsgn,
        ("decision_agreement", "decisions agree with float on"),
        lambda n_samples, steps: f"{n_samples} sample(s)",
        split_layout=True,
        split_classifier=lambda model: model[0],
        split_stream=_rsgn_stream,
    ),
)
