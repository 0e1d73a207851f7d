"""Optional modules by which later apps extend the case, offer, API and demo.

An app that is not installed yet (or has no such module) is skipped; an
import error *inside* a module that exists is raised, never swallowed.
"""

from collections.abc import Iterator
from importlib import import_module
from types import ModuleType


def present_modules(names: tuple[str, ...]) -> Iterator[ModuleType]:
    for name in names:
        try:
            yield import_module(name)
        except ModuleNotFoundError as error:
            # The module itself, or the app package it would live in, is absent.
            absent = error.name is not None and (name + ".").startswith(error.name + ".")
            if not absent:
                raise
