"""Harness tests: no Django, no network beyond loopback servers the tests start."""

import os
import sys

import pytest

HARNESS_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if HARNESS_ROOT not in sys.path:
    sys.path.insert(0, HARNESS_ROOT)  # run from a checkout without installing

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


@pytest.fixture
def fixtures_dir() -> str:
    return FIXTURES


def fixture_path(*parts: str) -> str:
    return os.path.join(FIXTURES, *parts)
