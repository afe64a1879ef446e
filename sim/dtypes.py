"""The float precisions a float unit model may run in, by their config name."""

from __future__ import annotations

import numpy as np

FLOAT_DTYPES = {"float64": np.float64, "float32": np.float32}
