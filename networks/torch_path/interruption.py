"""Stopping a training run on purpose: Ctrl-C finishes the current step and checkpoints; the
error that says where it stopped and which checkpoint a --resume starts from."""

from __future__ import annotations

import signal
import threading

from atomspark.sim.core import AtomsparkError


class TrainingInterrupted(AtomsparkError):
    """Ctrl-C during training: where it stopped and which checkpoint a --resume starts from."""

    def __init__(self, step: int, checkpoint_step: int | None):
        self.step, self.checkpoint_step = step, checkpoint_step
        saved = (
            "no checkpoint was written yet"
            if checkpoint_step is None
            else f"last checkpoint at step {checkpoint_step}"
        )
        super().__init__(f"interrupted at step {step}; {saved}")


class StopOnSigint:
    """The first Ctrl-C asks the loop to stop after the current step (and checkpoint); a second
    one interrupts at once. Only installed in the main thread."""

    def __init__(self) -> None:
        self.requested = False
        self._previous = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        self.requested = True
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def __exit__(self, *exc) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
