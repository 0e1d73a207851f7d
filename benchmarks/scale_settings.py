"""Production settings (from the environment, as always) plus the benchmark's baselines."""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "benchmarks.scale_urls"
