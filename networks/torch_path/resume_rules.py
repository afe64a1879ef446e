"""What a resumed training run may change: RESUME_MAY_CHANGE, and more epochs than planned."""

from __future__ import annotations

from atomspark.networks.torch_path.config import RESUME_MAY_CHANGE, validate_config
from atomspark.sim.core import AtomsparkError


def _flatten(cfg: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in cfg.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def check_resume_config(stored: dict, given: dict) -> list[str]:
    """Refuse a resume whose config changes the run; return the accepted changes (as text).

    Allowed: RESUME_MAY_CHANGE, and more epochs than the checkpoint's run was planned with."""
    old, new = _flatten(validate_config(stored)), _flatten(given)
    changed = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
    refused = [k for k in changed if k not in RESUME_MAY_CHANGE and k != "epochs"]
    if "epochs" in changed and new["epochs"] < old["epochs"]:
        refused.append("epochs")
    if refused:
        shown = "; ".join(f"{k} {old.get(k)!r} -> {new.get(k)!r}" for k in refused[:4])
        more = f" (and {len(refused) - 4} more)" if len(refused) > 4 else ""
        raise AtomsparkError(
            f"--resume: the config differs from the checkpoint's run: {shown}{more}; resume with "
            "the run's own config (epochs may only grow), or start a new run (--overwrite or "
            "another --out)"
        )
    return [f"{k} {old[k]!r} -> {new[k]!r}" for k in changed]
