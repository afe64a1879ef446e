"""Where Numba keeps compiled kernels, chosen before any kernel is decorated.

Numba's own search (the package's __pycache__, then ~/.cache/numba) fails with "no locator
available" when neither is writable, e.g. a non-root user without a writable HOME using a
read-only install. atomspark then uses a private folder in the temporary directory, and if even
that is impossible it turns caching off with a warning (kernels then compile at every start).
An explicit NUMBA_CACHE_DIR is always respected.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path


def writable_folder(path: str | os.PathLike) -> bool:
    """True when `path` exists or can be created and a file can be written in it."""
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def private_temp_cache() -> Path:
    """The fallback location: one folder per user in the temporary directory."""
    return Path(tempfile.gettempdir()) / f"atomspark-numba-cache-{os.getuid()}"


def choose_cache_dir(defaults: Sequence[Path], fallback: Path) -> tuple[str, Path | None]:
    """("default", None) if one of Numba's own locations works, ("fallback", dir) if only the
    fallback does (and belongs to this user), ("off", None) if nothing is writable."""
    if any(writable_folder(p) for p in defaults):
        return "default", None
    if writable_folder(fallback) and os.stat(fallback).st_uid == os.getuid():
        return "fallback", fallback
    return "off", None


def configure_matplotlib_cache() -> None:
    """Point Matplotlib's config/cache folder (MPLCONFIGDIR) at a private temporary folder when
    its default (~/.config/matplotlib) is not writable, instead of its two-line warning."""
    if os.environ.get("MPLCONFIGDIR"):
        return
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    if writable_folder(os.path.join(base, "matplotlib")):
        return
    fallback = Path(tempfile.gettempdir()) / f"atomspark-matplotlib-{os.getuid()}"
    if writable_folder(fallback) and os.stat(fallback).st_uid == os.getuid():
        os.environ["MPLCONFIGDIR"] = str(fallback)


def numba_user_cache_dir() -> Path:
    """Numba's user-wide cache folder (its AppDirs user_cache_dir), found without importing
    Numba on Linux, where it is $XDG_CACHE_HOME/numba or ~/.cache/numba."""
    if sys.platform.startswith("linux"):
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
        return Path(base) / "numba"
    from numba.misc.appdirs import AppDirs

    return Path(AppDirs(appname="numba", appauthor=False).user_cache_dir)


def configure_numba_cache() -> None:
    """Make `@njit(cache=True)` safe to import: pick a writable cache folder or disable caching.
    Numba itself is imported only when caching must be turned off, so that importing atomspark
    (e.g. for `atomspark --help`) does not pay for it."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    in_tree = Path(__file__).parent / "__pycache__"
    user_wide = numba_user_cache_dir()
    choice, folder = choose_cache_dir([in_tree, user_wide], private_temp_cache())
    if choice == "fallback":
        os.environ["NUMBA_CACHE_DIR"] = str(folder)  # read by Numba when it is imported
        if "numba" in sys.modules:
            sys.modules["numba"].config.CACHE_DIR = str(folder)
    elif choice == "off":
        from numba.core.dispatcher import Dispatcher

        Dispatcher.enable_caching = lambda self: None
        warnings.warn(
            f"atomspark: no writable folder for Numba's compiled-kernel cache ({in_tree}, "
            f"{user_wide}, {private_temp_cache()}); kernels are compiled at every start. "
            "Set NUMBA_CACHE_DIR to a writable folder to cache them.",
            RuntimeWarning,
            stacklevel=2,
        )
