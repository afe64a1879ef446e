"""A stand-in accelerator for a CPU-only CI: catches the device bugs a GPU would.

`StandIn` tensors hold CPU data but report the device `standin:0` (PyTorch's PrivateUse1 slot,
registered once per process with a Python device guard). `CudaRules`, a TorchDispatchMode, runs
every aten op on the CPU data and applies CUDA's rules on the way:

- no mixing: an op whose tensors live on both the stand-in and the CPU raises DeviceMixError
  (0-dim CPU tensors are allowed, as CUDA allows CPU scalars; explicit copies are allowed);
- host syncs are counted by the atomspark source line that caused them: reading a value
  (item/bool/float: `_local_scalar_dense`), copies to the host, ops whose output size depends
  on the data (nonzero, boolean-mask indexing, unique, masked_select) and eigh/eigvalsh, whose
  CUDA kernels check their info flag on the host;
- host-to-device copies are counted the same way.

Use: `with CudaRules() as rules:` around the code under test (autograd runs on the calling thread
inside it, so the rules see the backward pass too); `to_standin(x)` moves CPU tensors over.
"""

from __future__ import annotations

import os
import sys
from collections import Counter

import atomspark.networks
import torch
from torch.utils._python_dispatch import TorchDispatchMode

NAME = "standin"
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(atomspark.networks.__file__)) + os.sep
# The virtual environments live in the repository root too (tools/setup.sh): torch's own frames
# there are not atomspark's.
_ENVIRONMENTS = tuple(_PACKAGE_ROOT + venv + os.sep for venv in (".venv", ".venv-lava"))
aten = torch.ops.aten

# Ops that make the host wait for the device on CUDA.
_SYNC_OPS = {
    aten._local_scalar_dense.default,
    aten.is_nonzero.default,
    aten.equal.default,
    aten.nonzero.default,
    aten.masked_select.default,
    aten._unique2.default,
    aten.unique_consecutive.default,
    aten.unique_dim.default,
    aten._linalg_eigh.default,
    aten.linalg_eigh.default,
    aten.repeat_interleave.Tensor,
}
_COPY_OPS = {aten._to_copy.default, aten.copy_.default, aten.copy.default}


def standin_device() -> torch.device:
    """The stand-in device (registered on first use)."""
    if torch._C._get_privateuse1_backend_name() != NAME:
        from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

        _setup_privateuseone_for_python_backend(NAME)
    return torch.device(f"{NAME}:0")


class DeviceMixError(AssertionError):
    """An op mixed stand-in and CPU tensors (CUDA would raise)."""


class StandIn(torch.Tensor):
    """CPU data (`elem`) behind a tensor that reports the stand-in device."""

    elem: torch.Tensor

    @staticmethod
    def __new__(cls, elem: torch.Tensor):
        r = torch.Tensor._make_wrapper_subclass(
            cls,
            elem.shape,
            strides=elem.stride(),
            storage_offset=elem.storage_offset(),
            dtype=elem.dtype,
            layout=elem.layout,
            device=standin_device(),
            requires_grad=elem.requires_grad,
        )
        r.elem = elem
        return r

    __torch_function__ = torch._C._disabled_torch_function_impl

    def __repr__(self) -> str:
        return f"StandIn({self.elem!r})"

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        raise RuntimeError(f"{func} on a stand-in tensor outside CudaRules")


def _is_standin_device(device) -> bool:
    return device is not None and torch.device(device).type == NAME


def _source_line() -> str:
    """The innermost atomspark (non-test) frame: 'networks/torch_path/vn_torch.py:123'."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        inside = name.startswith(_PACKAGE_ROOT) and not name.startswith(_ENVIRONMENTS)
        if inside and f"{os.sep}tests{os.sep}" not in name:
            return f"{name[len(_PACKAGE_ROOT) :]}:{frame.f_lineno}"
        frame = frame.f_back
    return "<outside atomspark>"


class CudaRules(TorchDispatchMode):
    """Applies CUDA's device rules to StandIn tensors; counts syncs and copies by source line."""

    def __init__(self) -> None:
        super().__init__()
        self.ops = 0
        self.syncs: Counter[str] = Counter()
        self.h2d: Counter[str] = Counter()
        self._threads = None

    def __enter__(self):
        self._threads = torch.autograd.set_multithreading_enabled(False)
        self._threads.__enter__()
        standin_device()
        return super().__enter__()

    def __exit__(self, *exc):
        out = super().__exit__(*exc)
        self._threads.__exit__(*exc)
        return out

    @property
    def n_syncs(self) -> int:
        return sum(self.syncs.values())

    @property
    def n_h2d(self) -> int:
        return sum(self.h2d.values())

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.ops += 1
        on_device, on_host = [], []
        args = [_sort(a, on_device, on_host) for a in args]
        kwargs = {k: _sort(v, on_device, on_host) for k, v in kwargs.items()}
        target = kwargs.get("device")
        to_device = _is_standin_device(target)
        if func in _COPY_OPS:
            self._count_copy(func, args, target, on_device)
        elif on_device and any(t.dim() > 0 for t in on_host):
            raise DeviceMixError(
                f"{func} mixes {NAME} and cpu tensors at {_source_line()} "
                f"(cpu shapes {[tuple(t.shape) for t in on_host]})"
            )
        elif on_device and (
            func in _SYNC_OPS or (func is aten.index.Tensor and _has_bool_index(args))
        ):
            self.syncs[_source_line()] += 1

        if to_device:
            kwargs["device"] = torch.device("cpu")
        out = func(*[_unwrap(a) for a in args], **{k: _unwrap(v) for k, v in kwargs.items()})
        if target is not None:
            wrap = to_device
        elif func is aten.copy_.default:
            wrap = isinstance(args[0], StandIn)
        else:
            wrap = bool(on_device)
        if not wrap:
            return out
        wrappers = {id(x.elem): x for x in on_device}

        def rewrap(x):
            if not isinstance(x, torch.Tensor):
                return x
            same = wrappers.get(id(x))  # in-place ops return their own (wrapped) input
            return StandIn(x) if same is None else same

        if isinstance(out, (tuple, list)):
            return type(out)(rewrap(x) for x in out)
        return rewrap(out)

    def _count_copy(self, func, args, target, on_device) -> None:
        src = args[1] if func is aten.copy_.default else args[0]
        src_on_device = isinstance(src, StandIn)
        if func is aten.copy_.default:
            dst_on_device = isinstance(args[0], StandIn)
        else:
            dst_on_device = src_on_device if target is None else _is_standin_device(target)
        if src_on_device and not dst_on_device:
            self.syncs[_source_line()] += 1  # a device-to-host copy waits for the device
        elif dst_on_device and not src_on_device:
            self.h2d[_source_line()] += 1


def _sort(x, on_device: list, on_host: list):
    """Note where x's tensors live (x: a tensor, a list/tuple of them, or anything else)."""
    if isinstance(x, StandIn):
        on_device.append(x)
    elif isinstance(x, torch.Tensor):
        on_host.append(x)
    elif isinstance(x, (list, tuple)):
        for y in x:
            _sort(y, on_device, on_host)
    return x


def _unwrap(x):
    if isinstance(x, StandIn):
        return x.elem
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(y) for y in x)
    return x


def _has_bool_index(args) -> bool:
    return any(
        isinstance(i, torch.Tensor) and i.dtype == torch.bool
        for i in (args[1] or [])
        if i is not None
    )


def to_standin(x: torch.Tensor) -> torch.Tensor:
    """A CPU tensor's data on the stand-in device (call inside CudaRules)."""
    return x.to(standin_device())
