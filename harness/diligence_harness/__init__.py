"""Diligence verification harness: evidence about rented GPU compute.

Standalone on purpose: standard library only at run time, so one file (the
zipapp) can be copied onto a rented machine and run with a bare Python.
"""

__version__ = "0.1.0"

FORMAT_VERSION = "diligence-evidence/1"
METRIC_DEFINITIONS_VERSION = "diligence-metrics/1"
