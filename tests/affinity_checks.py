"""A shared check for tests of the Hebbian affinity step (device against NumPy reference)."""

from __future__ import annotations

import numpy as np


def assert_same_affinity_step(got, want, before, mode: str) -> None:
    """got (device) equals want (reference) after one affinity step, and the step moved the
    affinities away from before: u in published mode, the edge weights in sparse mode."""
    if mode == "published":
        np.testing.assert_allclose(got.affinity_u, want.affinity_u, rtol=0, atol=1e-14)
        assert not np.array_equal(got.affinity_u, before.affinity_u)
    else:
        np.testing.assert_allclose(
            got.edge_affinity.toarray(), want.edge_affinity.toarray(), rtol=0, atol=1e-15
        )
        assert not np.array_equal(got.edge_affinity.data, before.edge_affinity.data)
