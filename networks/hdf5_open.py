"""Open an untrusted HDF5 file (a netx network or a NIR graph) read-only, or say in one line
why not: h5py missing, not a file, not HDF5. What is inside is checked by the format's reader."""

from __future__ import annotations

from pathlib import Path

from atomspark.sim.core import AtomsparkError


def open_hdf5(path: str | Path, arg: str, fmt: str, give: str, **options):
    """(h5py, open file, Path); `arg` names the argument (NET, GRAPH), `fmt` the format in the
    install hint, `give` what to give instead (e.g. "lava-dl netx .net"). `options` go to
    h5py.File."""
    try:
        import h5py
    except ImportError as exc:
        raise AtomsparkError(f"{fmt} import needs h5py: pip install 'atomspark[netx]'") from exc
    p = Path(path)
    if not p.is_file():
        raise AtomsparkError(f"{arg}: {p} is not a file (give a {give} HDF5 file)")
    try:
        f = h5py.File(p, "r", **options)
    except OSError:
        raise AtomsparkError(f"{arg}: {p} is not an HDF5 file (give a {give} file)") from None
    return h5py, f, p
