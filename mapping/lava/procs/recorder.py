"""Recorder: a sink Process that stores its input every step and writes it to one .npy file.

Lava's Var.get() moves one element at a time (~35k elements/s); the recorder instead hands its
whole (steps x size) record back through a file written by the ProcessModel on the last step.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from atomspark.sim.core import AtomsparkError
from lava.magma.core.decorator import implements, requires, tag
from lava.magma.core.model.py.model import PyLoihiProcessModel
from lava.magma.core.model.py.ports import PyInPort
from lava.magma.core.model.py.type import LavaPyType
from lava.magma.core.process.ports.ports import InPort
from lava.magma.core.process.process import AbstractProcess
from lava.magma.core.resources import CPU
from lava.magma.core.sync.protocols.loihi_protocol import LoihiProtocol


class Recorder(AbstractProcess):
    """Record `size` values per step for `steps` steps into the .npy file `path`."""

    def __init__(self, *, size: int, steps: int, path: str, name: str | None = None) -> None:
        parts = Path(path).parts
        if ".." in parts or not path.endswith(".npy"):
            raise AtomsparkError(f"Recorder path {path!r:.80}: must be a .npy file with no '..'")
        super().__init__(size=size, steps=steps, path=path, name=name)
        self.a_in = InPort(shape=(size,))


class _AbstractRecorderModel(PyLoihiProcessModel):
    a_in = None

    def __init__(self, proc_params) -> None:
        super().__init__(proc_params)
        self.record = None

    def run_spk(self) -> None:
        data = self.a_in.recv()
        steps = int(self.proc_params["steps"])
        if self.record is None:
            self.record = np.zeros((steps, data.size), dtype=data.dtype)
        if self.time_step <= steps:
            self.record[self.time_step - 1] = data
        if self.time_step == steps:
            np.save(self.proc_params["path"], self.record)


@implements(proc=Recorder, protocol=LoihiProtocol)
@requires(CPU)
@tag("floating_pt")
class PyRecorderModelFloat(_AbstractRecorderModel):
    """Float recorder."""

    a_in: PyInPort = LavaPyType(PyInPort.VEC_DENSE, float)


@implements(proc=Recorder, protocol=LoihiProtocol)
@requires(CPU)
@tag("bit_accurate_loihi", "fixed_pt")
class PyRecorderModelFixed(_AbstractRecorderModel):
    """Integer recorder (int64 so that graded payloads are stored unchanged)."""

    a_in: PyInPort = LavaPyType(PyInPort.VEC_DENSE, np.int64)
