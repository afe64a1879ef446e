"""Each model family's side of `compare` and of the profile's GPU side, by family name.

A family (networks/model_family.py) says how it is loaded, run and trained; what a comparison
of it runs lives at this layer, in one module per family (vn_compare.py, rsgn_compare.py), and
is registered here explicitly with `register_compare_side`: the built-ins below, a new family
from its own module. Nothing is attached by importing something else."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from atomspark.scenarios.compare import rsgn_compare, vn_compare
from atomspark.sim.core import AtomsparkError


@dataclass(frozen=True)
class CompareSide:
    """run(CompareRun, model, cutoffs) -> (chip row, GPU variants, chip backend name, how the
    chip's steps were chosen), filling the run's report; check_data(x, model) -> x, refusing a
    layout the model does not take; check_labels(labels, model): the labels' range;
    gpu_side_for_run(model, data, chip outputs, graph, gpu, chip energy, chip time, device): the
    GPU's own algorithm beside an engine run (profile; None: profile shows the dense equivalent
    only); cutoff_sweep: its report has the
    event-cutoff sweep (one more stage)."""

    run: Callable
    check_data: Callable
    gpu_side_for_run: Callable | None = None
    check_labels: Callable = lambda labels, model: None
    cutoff_sweep: bool = False


_SIDES: dict[str, CompareSide] = {}


def register_compare_side(family: str, side: CompareSide) -> CompareSide:
    """Make `side` the comparison of the family called `family` (one side per family)."""
    if not isinstance(side, CompareSide):
        raise AtomsparkError(
            f"register_compare_side: expected a CompareSide, got {type(side).__name__}"
        )
    known = _SIDES.get(family)
    if known is not None and known is not side:
        raise AtomsparkError(f"register_compare_side: {family!r} has a comparison already")
    _SIDES[family] = side
    return side


def compare_side(family: str) -> CompareSide:
    """The comparison of the family called `family`; none is an AtomsparkError."""
    side = _SIDES.get(family)
    if side is None:
        known = ", ".join(sorted(_SIDES))
        raise AtomsparkError(
            f"model family {family!r}: compare has no side for it (known: {known}); declare one "
            "with atomspark.scenarios.compare.family_sides.register_compare_side"
        )
    return side


def profile_gpu_side(family: str) -> Callable | None:
    """The family's GPU side for `profile`, or None when it declares none."""
    side = _SIDES.get(family)
    return None if side is None else side.gpu_side_for_run


register_compare_side(
    "vn",
    CompareSide(
        run=vn_compare.compare_vn,
        check_data=vn_compare.check_data,
        gpu_side_for_run=vn_compare.gpu_side_for_run,
    ),
)
register_compare_side(
    "rsgn",
    CompareSide(
        run=rsgn_compare.compare_rsgn,
        check_data=rsgn_compare.check_data,
        gpu_side_for_run=rsgn_compare.gpu_side_for_run,
        check_labels=rsgn_compare.check_labels,
        cutoff_sweep=True,
    ),
)
