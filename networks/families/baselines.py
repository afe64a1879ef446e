"""The baselines of the sequence task (networks/torch_path/baselines.py): trained beside the
RSGN on the same data, written as their state dicts (not read back by the simulator)."""

from __future__ import annotations

from atomspark.networks.model_family import ModelFamily, register_family

NAMES = ("transformer", "sparse-transformer", "lstm", "mlp", "mean-linear")


def _trainer():
    from atomspark.networks.torch_path.baseline_trainer import BASELINE_TRAINER

    return BASELINE_TRAINER


BASELINE_FAMILIES = tuple(
    register_family(
        ModelFamily(
            name=name,
            title=name,
            task="rsgn-sequence",
            metric="accuracy",
            trainer=_trainer,
            describe=lambda cfg: f"{cfg['task']} ({cfg['model']['kind']} model)",
        )
    )
    for name in NAMES
)
