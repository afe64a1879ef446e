"""atomspark.sim: the event engine (bottom layer; never imports torch)."""

from atomspark.sim.numba_cache import configure_matplotlib_cache, configure_numba_cache

configure_numba_cache()
configure_matplotlib_cache()
