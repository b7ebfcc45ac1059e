"""pandas for the agreement package, imported when first used.

Every release computes the project's agreement report. Where no item has two annotators (a corpus imported with
one label per item) the report needs no pandas at all (:mod:`.data` and :mod:`.report` work on numpy arrays and
build frames only for a measure that has items to measure), and importing it would cost the release's build
≈ 0.2–0.4 s of CPU under its GIL (docs/performance.md). So the package's modules name pandas through
:data:`pd`, which imports it on the first attribute asked for.

Not ``importlib.util.LazyLoader``: on Python 3.11 its module is not safe to touch from two threads at once, and a
release computes the report beside its main thread. Here the import goes through the import system's own lock.
"""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """A module imported on the first attribute asked of it (each access asks ``sys.modules`` again: a dict
    lookup, negligible beside what is done with a pandas object)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)


pd: Any = LazyModule("pandas")
