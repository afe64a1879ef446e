"""Progress for long commands: a tqdm bar on a terminal, plain dated lines in logs.

A tqdm bar redraws itself with carriage returns, which fill a log file or a CI transcript with
hundreds of partial lines. `progress` therefore returns a bar only when the stream is a terminal;
otherwise it returns `PlainProgress`, which prints one complete line at most every `every_s`
seconds (and when the work ends), with the count, the share done, the elapsed time and an ETA.
Both accept the same calls: update, set_postfix, set_postfix_str, write, close, and `with`.
"""

from __future__ import annotations

import sys
import time
from typing import IO

PLAIN_EVERY_S = 10.0


class PlainProgress:
    """tqdm's interface, printing whole lines (no carriage returns) at most every `every_s` s."""

    def __init__(
        self,
        total: int | None,
        desc: str,
        unit: str = "it",
        initial: int = 0,
        file: IO[str] | None = None,
        every_s: float = PLAIN_EVERY_S,
        disable: bool = False,
    ) -> None:
        self.total, self.desc, self.unit, self.n = total, desc, unit, initial
        self.file = file if file is not None else sys.stderr
        self.every_s, self.disable = every_s, disable
        self.postfix = ""
        self._start = self._last = time.monotonic()
        self._start_n = self._shown = initial
        self._closed = False

    def update(self, n: int = 1) -> None:
        self.n += n
        now = time.monotonic()
        if now - self._last >= self.every_s:
            self._last = now
            self._line()

    def set_postfix(self, refresh: bool = True, **values) -> None:
        self.postfix = ", ".join(f"{k} {v}" for k, v in values.items())

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        self.postfix = text

    def write(self, text: str) -> None:
        if not self.disable:
            print(text, file=self.file, flush=True)

    def close(self) -> None:
        if not self._closed and self.n != self._shown:
            self._line()
        self._closed = True

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is not None:  # the error's own message is the last line, not a count
            self._closed = True
        self.close()

    def _line(self) -> None:
        if self.disable:
            return
        self._shown = self.n
        elapsed = time.monotonic() - self._start
        done = f"{self.n}/{self.total}" if self.total else str(self.n)
        parts = [f"{self.desc} {done} {self.unit}"]
        if self.total:
            parts[0] += f" ({100.0 * self.n / self.total:.0f} %)"
        parts.append(f"{elapsed:.0f} s")
        rate_n = self.n - self._start_n
        if self.total and rate_n > 0 and self.n < self.total:
            parts.append(f"ETA {elapsed / rate_n * (self.total - self.n):.0f} s")
        if self.postfix:
            parts.append(self.postfix)
        print(", ".join(parts), file=self.file, flush=True)


def progress(
    total: int | None,
    desc: str,
    unit: str = "it",
    enabled: bool = True,
    initial: int = 0,
    file: IO[str] | None = None,
):
    """A tqdm bar on a terminal, PlainProgress lines otherwise; nothing when not `enabled`."""
    stream = file if file is not None else sys.stderr
    if enabled and getattr(stream, "isatty", lambda: False)():
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, unit=unit, initial=initial, file=stream, leave=False)
    return PlainProgress(total, desc, unit, initial, stream, disable=not enabled)


def track(iterable, desc: str, unit: str = "it", enabled: bool = True, total: int | None = None):
    """Iterate over `iterable` with `progress` (a bar on a terminal, plain lines otherwise)."""
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    with progress(total, desc, unit, enabled) as bar:
        for item in iterable:
            yield item
            bar.update(1)


class Stages:
    """Numbered stage lines for a command made of a few long steps: each call logs
    "PREFIX step i/n: TEXT (T s so far)", so a log shows what runs now and how long it took."""

    def __init__(self, log, prefix: str, total: int) -> None:
        self.log, self.prefix, self.total, self.done = log, prefix, total, 0
        self._start = time.monotonic()

    def __call__(self, text: str) -> None:
        self.done += 1
        elapsed = time.monotonic() - self._start
        self.log(f"{self.prefix} step {self.done}/{self.total}: {text} ({elapsed:.0f} s so far)")
