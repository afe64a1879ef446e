"""Loaded into every worker of the sweep's own LocalCluster (a Dask preload).

Ctrl-C in a terminal reaches every process of the foreground group, the workers included. A
worker's event loop turns it into a KeyboardInterrupt and prints two tracebacks before the sweep
has said anything. The sweep itself handles Ctrl-C (it cancels the cells and closes the cluster,
which stops the workers), so the workers ignore it.
"""

from __future__ import annotations

import signal
import threading


def dask_setup(worker) -> None:
    """Dask calls this in each worker process as it starts: ignore SIGINT there."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
