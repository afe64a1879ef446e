"""The built-in data sets (kept at this path; they live in atomspark.networks.datasets)."""

from atomspark.networks.datasets import *  # noqa: F403
