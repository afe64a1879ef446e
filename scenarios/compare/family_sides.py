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
    cutoff_sweep: its report has the event-cutoff sweep (one more stage). `compare` and
    `profile` both price a model through `run` (scenarios/compare/chip_vs_gpu.price_model)."""

    run: Callable
    check_data: Callable
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


register_compare_side(
    "vn",
    CompareSide(
        run=vn_compare.compare_vn,
        check_data=vn_compare.check_data,
    ),
)
register_compare_side(
    "rsgn",
    CompareSide(
        run=rsgn_compare.compare_rsgn,
        check_data=rsgn_compare.check_data,
        check_labels=rsgn_compare.check_labels,
        cutoff_sweep=True,
    ),
)
