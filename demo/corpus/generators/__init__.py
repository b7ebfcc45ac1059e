"""The generators of ``demo/corpus/generated/<slug>.jsonl``: one module per task type, named by its slug,
defining ``records(rng)`` (the records added to the hand-written ``<slug>.jsonl``)."""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable

from .. import MissingDemoCorpus
from ._korean import Record


def records_for(slug: str) -> Callable[[random.Random], list[Record]]:
    """The ``records(rng)`` of the task type's generator module, or :class:`MissingDemoCorpus`."""
    name = f"{__name__}.{slug}"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        raise MissingDemoCorpus(slug, [f"demo/corpus/generators/{slug}.py defining records(rng)"]) from None
    return module.records
