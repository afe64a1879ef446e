"""VNAtom: the VN atom (event-driven ISTA / LCA unit) as a Lava Process with float and
bit-accurate fixed-point ProcessModels.

Per step: c += a_in (graded change events weighted by the Gram matrix, arriving one step after
they were sent, as Lava's Sparse/Dense delay them); g <- soft(g + eta (drive - c), thresh);
send dg = g - g_sent as a graded spike (0 = no event); g_sent starts at 0, so an atom's first
event carries its initial code, as in the engine. The fixed-point model calls the integer step
of atomspark.sim.units.vn_fixed (24-bit wrap of c, saturation of g and of the 24-bit payload),
the definition the engine's Numba kernel is tested against, so Lava and the engine cannot drift
apart.
"""

from __future__ import annotations

import numpy as np
from atomspark.sim.units.vn import vn_float_reference_step
from atomspark.sim.units.vn_fixed import vn_fixed_step
from lava.magma.core.decorator import implements, requires, tag
from lava.magma.core.model.py.model import PyLoihiProcessModel
from lava.magma.core.model.py.ports import PyInPort, PyOutPort
from lava.magma.core.model.py.type import LavaPyType
from lava.magma.core.process.ports.ports import InPort, OutPort
from lava.magma.core.process.process import AbstractProcess
from lava.magma.core.process.variable import Var
from lava.magma.core.resources import CPU
from lava.magma.core.sync.protocols.loihi_protocol import LoihiProtocol


class VNAtom(AbstractProcess):
    """`size` VN atoms. Float: eta, event_threshold used; fixed: eta_mant, eta_shift used and
    g, drive, thresh are integers in units of 2**-frac_bits."""

    def __init__(
        self,
        *,
        size: int,
        drive,
        thresh,
        g_init=0,
        eta: float = 0.0,
        event_threshold: float = 0.0,
        eta_mant: int = 0,
        eta_shift: int = 0,
        name: str | None = None,
    ) -> None:
        super().__init__(
            size=size,
            eta=eta,
            event_threshold=event_threshold,
            eta_mant=eta_mant,
            eta_shift=eta_shift,
            name=name,
        )
        shape = (size,)
        self.a_in = InPort(shape=shape)
        self.s_out = OutPort(shape=shape)
        self.g = Var(shape=shape, init=g_init)
        self.g_sent = Var(shape=shape, init=0)
        self.c = Var(shape=shape, init=0)
        self.drive = Var(shape=shape, init=drive)
        self.thresh = Var(shape=shape, init=thresh)


@implements(proc=VNAtom, protocol=LoihiProtocol)
@requires(CPU)
@tag("floating_pt")
class PyVNAtomModelFloat(PyLoihiProcessModel):
    """Float VN atom: the sim unit's reference step (the rule the engine's float kernel follows)."""

    a_in: PyInPort = LavaPyType(PyInPort.VEC_DENSE, float)
    s_out: PyOutPort = LavaPyType(PyOutPort.VEC_DENSE, float)
    g: np.ndarray = LavaPyType(np.ndarray, float)
    g_sent: np.ndarray = LavaPyType(np.ndarray, float)
    c: np.ndarray = LavaPyType(np.ndarray, float)
    drive: np.ndarray = LavaPyType(np.ndarray, float)
    thresh: np.ndarray = LavaPyType(np.ndarray, float)

    def run_spk(self) -> None:
        g, g_sent, c, dg = vn_float_reference_step(
            self.g,
            self.g_sent,
            self.c,
            self.a_in.recv(),
            self.drive,
            self.thresh,
            self.proc_params["eta"],
            self.proc_params["event_threshold"],
        )
        self.g[:] = g
        self.g_sent[:] = g_sent
        self.c[:] = c
        self.s_out.send(dg)


@implements(proc=VNAtom, protocol=LoihiProtocol)
@requires(CPU)
@tag("bit_accurate_loihi", "fixed_pt")
class PyVNAtomModelFixed(PyLoihiProcessModel):
    """Integer VN atom: 24-bit state words, graded spikes with the integer change as payload.
    a_in arrives as the int64 sum of the connections' int32 outputs, as the engine sums its
    per-connection channels."""

    a_in: PyInPort = LavaPyType(PyInPort.VEC_DENSE, np.int64, precision=32)
    s_out: PyOutPort = LavaPyType(PyOutPort.VEC_DENSE, np.int64, precision=24)
    g: np.ndarray = LavaPyType(np.ndarray, np.int64, precision=24)
    g_sent: np.ndarray = LavaPyType(np.ndarray, np.int64, precision=24)
    c: np.ndarray = LavaPyType(np.ndarray, np.int64, precision=24)
    drive: np.ndarray = LavaPyType(np.ndarray, np.int64, precision=24)
    thresh: np.ndarray = LavaPyType(np.ndarray, np.int64, precision=24)

    def run_spk(self) -> None:
        g, g_sent, c, dg, _, _ = vn_fixed_step(
            self.g,
            self.g_sent,
            self.c,
            self.a_in.recv(),
            self.drive,
            self.thresh,
            self.proc_params["eta_mant"],
            self.proc_params["eta_shift"],
        )
        self.g[:] = g
        self.g_sent[:] = g_sent
        self.c[:] = c
        self.s_out.send(dg)
