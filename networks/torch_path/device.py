"""Choose the torch device once per process: CUDA when present, else CPU, or an explicit request.

The choice is logged once (logger "atomspark.torch"), so a run's log always says where it ran.
Mixed precision is opt-in (`autocast_context`); the default is full precision everywhere.
`default_dtype` picks float32 on CUDA (float64 is slow on most GPUs) and float64 on CPU (the
setting the NumPy oracle is checked at). `pinned_numerics` fixes TF32 and determinism for a run
and returns the record that is stored with it.
"""

from __future__ import annotations

import contextlib
import logging
import os

import torch
from atomspark.sim.core import AtomsparkError

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


def default_dtype(device: torch.device) -> torch.dtype:
    """float32 on CUDA, float64 elsewhere (the CPU oracle setting)."""
    return torch.float32 if torch.device(device).type == "cuda" else torch.float64


def resolve_dtype(name: str | None, device: torch.device) -> torch.dtype:
    """'float32', 'float64' or 'auto'/None (= default_dtype(device)) as a torch dtype."""
    if name in (None, "auto"):
        return default_dtype(device)
    if name not in ("float32", "float64"):
        raise AtomsparkError(f"dtype: must be float32, float64 or auto, got {name!r}")
    return torch.float64 if name == "float64" else torch.float32


@contextlib.contextmanager
def pinned_numerics(device: torch.device, dtype: torch.dtype):
    """Within the block: no TF32 (float32 means float32), deterministic algorithms (warn where
    an op has none), CUBLAS_WORKSPACE_CONFIG set if unset; previous settings restored after.
    Yields the record to store with the run (device, dtype, TF32, determinism, versions)."""
    saved = (
        torch.backends.cuda.matmul.allow_tf32,
        torch.backends.cudnn.allow_tf32,
        torch.backends.cudnn.deterministic,
        torch.backends.cudnn.benchmark,
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
    )
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    _set_deterministic(True, warn_only=True)
    try:
        yield numerics_record(device, dtype)
    finally:
        (
            torch.backends.cuda.matmul.allow_tf32,
            torch.backends.cudnn.allow_tf32,
            torch.backends.cudnn.deterministic,
            torch.backends.cudnn.benchmark,
        ) = saved[:4]
        _set_deterministic(saved[4], warn_only=saved[5])


def _set_deterministic(mode: bool, warn_only: bool) -> None:
    """torch.use_deterministic_algorithms without its import of torch._inductor (~6 s on a
    loaded 2-core machine), which only matters to torch.compile; this path does not compile."""
    torch._C._set_deterministic_algorithms(mode, warn_only=warn_only)


def numerics_record(device: torch.device, dtype: torch.dtype) -> dict:
    """What decides a run's numbers: device, dtype, TF32, determinism, torch/CUDA versions."""
    device = torch.device(device)
    return {
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU",
        "dtype": str(dtype).replace("torch.", ""),
        "tf32_matmul": bool(torch.backends.cuda.matmul.allow_tf32),
        "tf32_cudnn": bool(torch.backends.cudnn.allow_tf32),
        "deterministic_algorithms": bool(torch.are_deterministic_algorithms_enabled()),
        "cublas_workspace_config": os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
    }


def autocast_context(device: torch.device, enabled: bool = False):
    """Mixed-precision context (bfloat16 autocast) when `enabled`, else a no-op context.

    Autocast only lowers float32 work: a float64 model under it would silently stay float64,
    so that combination is refused (train's config check says so first)."""
    if not enabled:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)
