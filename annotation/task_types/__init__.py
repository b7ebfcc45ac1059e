"""The task-type registry: one module per task type, discovered at import time.

Adding a ninth task type means adding a module here that defines ``TASK_TYPE``: the module declares what
every layer does for the task (see :mod:`.base`), and nothing else in the code branches on task slugs.

The apps import this package only, never a task type's module (the import contracts in pyproject.toml,
docs/ARCHITECTURE.md): it holds the registry and re-exports the contract, with the KLUE-NER markup helpers the
KLUE files and the Label Studio export share with the NER task type.
"""

from __future__ import annotations

import importlib
import pkgutil

from ._markup import parse_markup, spans_from_tags, to_markup
from .base import (
    CHAR_TSV,
    EOJEOL_TSV,
    JSON_ARRAY,
    LABEL_NAMES,
    LABEL_STAGE,
    SQUAD,
    GuidelineTemplate,
    KlueFile,
    MissingLayer,
    ParsedRecord,
    PayloadError,
    RecordAnnotation,
    SpanField,
    Stage,
    TaskType,
    reject_nul_characters,
)

__all__ = ["CHAR_TSV", "EOJEOL_TSV", "JSON_ARRAY", "LABEL_NAMES", "LABEL_STAGE", "SQUAD", "GuidelineTemplate",
           "KlueFile", "MissingLayer", "ParsedRecord", "PayloadError", "RecordAnnotation", "SpanField", "Stage",
           "TaskType", "all_task_types", "get_task_type", "parse_markup", "register", "reject_nul_characters", "slugs",
           "spans_from_tags", "to_markup", "unregister"]

_REGISTRY: dict[str, TaskType] = {}


def _discover() -> None:
    for module_info in pkgutil.iter_modules(__path__):
        if module_info.name.startswith("_") or module_info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        task_type = getattr(module, "TASK_TYPE", None)
        if isinstance(task_type, TaskType):
            register(task_type)


def register(task_type: TaskType) -> None:
    """Add a task type to the registry (the modules here are registered at import; tests register their own)."""
    if task_type.slug in _REGISTRY and _REGISTRY[task_type.slug] is not task_type:
        raise ValueError(f"task type {task_type.slug!r} is already registered")
    _REGISTRY[task_type.slug] = task_type


def unregister(slug: str) -> None:
    _REGISTRY.pop(slug, None)


def get_task_type(slug: str) -> TaskType:
    try:
        return _REGISTRY[slug]
    except KeyError:
        expected = ", ".join(slugs())
        raise PayloadError("task_type", f"unknown task type {slug!r}; expected one of {expected}") from None


def all_task_types() -> list[TaskType]:
    return sorted(_REGISTRY.values(), key=lambda t: (t.order, t.slug))


def slugs() -> list[str]:
    return [t.slug for t in all_task_types()]


_discover()
