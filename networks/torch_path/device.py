"""Choose the torch device once per process: CUDA when present, else CPU, or an explicit request.

The choice is logged once (logger "atomspark.torch"), so a run's log always says where it ran.
Mixed precision is opt-in (`autocast_context`); the default is full precision everywhere.
"""

from __future__ import annotations

import contextlib
import logging

import torch
from atomspark.sim.validation import AtomsparkError

LOG = logging.getLogger("atomspark.torch")
_logged: set[str] = set()


def select_device(requested: str | None = None) -> torch.device:
    """Return the device to run on: `requested` ("cpu", "cuda", "cuda:1", "auto" or None = auto).

    A request for a device this machine does not have raises an AtomsparkError that says so.
    """
    name = "auto" if requested is None else str(requested).strip().lower()
    if name == "auto":
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        try:
            device = torch.device(name)
        except RuntimeError as exc:
            raise AtomsparkError(
                f"device: {requested!r} is not a torch device name ({exc})"
            ) from exc
        if device.type == "cuda":
            if not torch.cuda.is_available():
                raise AtomsparkError(
                    f"device: {requested!r} requested but CUDA is not available on this machine"
                )
            index = 0 if device.index is None else device.index
            if index >= torch.cuda.device_count():
                raise AtomsparkError(
                    f"device: {requested!r} requested but only "
                    f"{torch.cuda.device_count()} CUDA device(s) exist"
                )
        elif device.type != "cpu":
            raise AtomsparkError(f"device: {requested!r} is not supported (use cpu, cuda or auto)")
    key = str(device)
    if key not in _logged:
        _logged.add(key)
        detail = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
        LOG.info("atomspark torch path runs on %s (%s)", key, detail)
    return device


def autocast_context(device: torch.device, enabled: bool = False):
    """Mixed-precision context (bfloat16 autocast) when `enabled`, else a no-op context."""
    if not enabled:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)
