"""Checks shared by the task-type modules.

Every helper raises :class:`PayloadError` with the field path it was given, so the eight modules state
*what* they require and leave the wording of type errors to one place. The leading underscore keeps
the registry's auto-discovery from treating this module as a task type.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .base import PayloadError

_MISSING = object()


def join(prefix: str, key: str | int) -> str:
    """Build a field path: ``join("entities[1]", "end")`` -> ``entities[1].end``."""
    if isinstance(key, int):
        return f"{prefix}[{key}]"
    return f"{prefix}.{key}" if prefix else key


def type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def require_dict(value: Any, field: str = "") -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise PayloadError(field, f"must be an object, got {type_name(value)}")
    return dict(value)


def require_list(value: Any, field: str, *, non_empty: bool = False) -> list[Any]:
    # A string is a Sequence too; never accept it where a list is meant.
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        raise PayloadError(field, f"must be a list, got {type_name(value)}")
    if non_empty and not value:
        raise PayloadError(field, "must not be empty")
    return list(value)


def get(payload: Mapping[str, Any], key: str, prefix: str = "") -> Any:
    """The value of a required key (``None`` is a value; only absence is an error)."""
    value = payload.get(key, _MISSING)
    if value is _MISSING:
        raise PayloadError(join(prefix, key), "is required")
    return value


def require_str(value: Any, field: str, *, non_empty: bool = True) -> str:
    if not isinstance(value, str):
        raise PayloadError(field, f"must be a string, got {type_name(value)}")
    if non_empty and not value.strip():
        raise PayloadError(field, "must not be empty")
    return value


def str_field(payload: Mapping[str, Any], key: str, prefix: str = "", *, non_empty: bool = True) -> str:
    return require_str(get(payload, key, prefix), join(prefix, key), non_empty=non_empty)


def optional_str(payload: Mapping[str, Any], key: str, prefix: str = "") -> str | None:
    """An optional string field: absent or null is ``None``; an empty string is allowed as-is."""
    value = payload.get(key)
    if value is None:
        return None
    return require_str(value, join(prefix, key), non_empty=False)


def require_int(value: Any, field: str, *, lo: int | None = None, hi: int | None = None) -> int:
    # bool is an int subclass in Python; True as an offset is always a client bug.
    if isinstance(value, bool) or not isinstance(value, int):
        raise PayloadError(field, f"must be an integer, got {type_name(value)} {value!r}")
    if lo is not None and value < lo:
        raise PayloadError(field, f"{value} is below the minimum {lo}")
    if hi is not None and value > hi:
        raise PayloadError(field, f"{value} is above the maximum {hi}")
    return value


def require_number(value: Any, field: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PayloadError(field, f"must be a number, got {type_name(value)} {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise PayloadError(field, f"must be a finite number, got {value!r}")
    return value


def require_choice(value: Any, choices: Iterable[str], field: str, what: str = "label") -> str:
    require_str(value, field)
    options = list(choices)
    if value not in options:
        shown = ", ".join(options) if len(options) <= 12 else ", ".join(options[:12]) + ", …"
        raise PayloadError(field, f"unknown {what} {value!r}; expected one of {shown}")
    return value


def schema_list(schema: Mapping[str, Any], key: str) -> list[str]:
    """A label list from the project's schema; a broken schema is reported as such, not as bad input."""
    value = schema.get(key)
    if not isinstance(value, list) or not value:
        raise PayloadError(f"schema.{key}", "the project's schema has no list of values here")
    return value


def check_span(text: str, start: Any, end: Any, prefix: str, *, text_name: str) -> tuple[int, int]:
    """Check ``[start, end)`` (end exclusive, code points) is a non-empty span inside ``text``."""
    start = require_int(start, join(prefix, "start"))
    end = require_int(end, join(prefix, "end"))
    if start < 0:
        raise PayloadError(join(prefix, "start"), f"{start} is negative")
    if end > len(text):
        raise PayloadError(join(prefix, "end"), f"{end} is past the end of the {text_name} "
                                                f"(length {len(text)})")
    if start >= end:
        raise PayloadError(join(prefix, "end"), f"span [{start}, {end}) is empty; end must be greater "
                                                f"than start")
    return start, end


def check_quoted(text: str, quoted: str, start: int, field: str, *, text_name: str) -> None:
    """Check that ``quoted`` is exactly what ``text`` holds at ``start``; say what it holds if not."""
    actual = text[start:start + len(quoted)]
    if actual != quoted:
        raise PayloadError(field, f"{quoted!r} does not match the {text_name}, which holds {actual!r} at "
                                  f"[{start}, {start + len(quoted)})")


def keep_extra(payload: Mapping[str, Any], normalised: dict[str, Any]) -> dict[str, Any]:
    """The normalised item: checked fields (absent optionals dropped) plus unknown keys untouched.

    Unknown keys ride along because provenance such as ``guid`` is useful downstream.
    """
    extra = {k: v for k, v in payload.items() if k not in normalised}
    return {**{k: v for k, v in normalised.items() if v is not None}, **extra}
