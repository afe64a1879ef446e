"""Check that a scheduler address answers in Dask's protocol before a Dask client connects to it.

A Dask client that reaches something else (an HTTP server, a proxy) does not fail cleanly: it
waits past its timeout, or reads the first bytes of an HTTP reply as a message length and dies
allocating exabytes. A Dask scheduler speaks first: on every new connection it sends its
handshake, an 8-byte message length followed by a short message. So the probe opens a plain TCP
connection, sends nothing, and reads 8 bytes within the timeout; anything else is refused in one
line before Dask is involved.
"""

from __future__ import annotations

import socket
import struct
import time
from urllib.parse import urlsplit

from atomspark.sim.core import AtomsparkError

DASK_PORT = 8786
# A scheduler's handshake (its comm settings, msgpack-encoded) is well under a kibibyte.
MAX_HANDSHAKE_BYTES = 1 << 20


def tcp_endpoint(address: str) -> tuple[str, int] | None:
    """(host, port) of a tcp:// (or scheme-less) address; None for other transports (tls, ucx,
    inproc), which the probe leaves to Dask."""
    text = address if "://" in address else f"tcp://{address}"
    parts = urlsplit(text)
    if parts.scheme != "tcp":
        return None
    try:
        port = parts.port or DASK_PORT
    except ValueError:
        raise AtomsparkError(
            f"--scheduler {address}: the port is not a number; give tcp://HOST:PORT"
        ) from None
    if not parts.hostname:
        raise AtomsparkError(f"--scheduler {address}: no host; give tcp://HOST:PORT")
    return parts.hostname, port


def probe_scheduler(address: str, timeout: float) -> None:
    """Raise one line unless a Dask scheduler's handshake arrives from `address` within
    `timeout` seconds (connection and first bytes together)."""
    endpoint = tcp_endpoint(address)
    if endpoint is None:
        return
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection(endpoint, timeout=timeout)
    except OSError as exc:
        why = "timed out" if isinstance(exc, socket.timeout) else exc.strerror or str(exc)
        raise AtomsparkError(
            f"--scheduler {address}: no Dask scheduler answered within {timeout:g} s ({why}); "
            "check the address (tcp://HOST:8786) and that the scheduler is running"
        ) from None
    try:
        with sock:
            head = _read_exactly(sock, 8, deadline)
    except OSError:  # a timeout, or a reset: either way no handshake
        raise AtomsparkError(
            f"--scheduler {address}: is not a Dask scheduler (the port accepted a connection "
            f"but sent no Dask handshake within {timeout:g} s); check the address and port "
            "(a scheduler listens on tcp://HOST:8786 by default)"
        ) from None
    (length,) = struct.unpack("Q", head) if len(head) == 8 else (0,)
    if not 0 < length <= MAX_HANDSHAKE_BYTES:
        raise AtomsparkError(
            f"--scheduler {address}: is not a Dask scheduler (something else answers on this "
            "port); check the address and port (a scheduler listens on tcp://HOST:8786 by "
            "default)"
        )


def _read_exactly(sock: socket.socket, n: int, deadline: float) -> bytes:
    """Up to `n` bytes, fewer when the peer closes first; socket.timeout past `deadline`."""
    data = b""
    while len(data) < n:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        sock.settimeout(remaining)
        chunk = sock.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data
