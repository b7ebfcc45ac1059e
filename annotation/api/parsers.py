"""JSON request bodies checked before any view sees them: nesting depth and NUL characters.

Python's ``json`` recurses once per nesting level, so a 2 KB body of ``[[[[…]]]]`` raised ``RecursionError``
(a 500) and a value only a little less deep would make every recursive validator after it fail the same way.
PostgreSQL cannot store a NUL (``\\u0000``) in ``jsonb`` or text, so one in any key or string failed at the
database with a 500. Both are refused here with a 400 naming where the problem is; no real payload (the
deepest, a DST dialogue or a label schema, is under ten levels) comes near the limit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_JSON_DEPTH = 32


class JsonInputError(ValueError):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def check_json(data: Any, *, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Raise ``JsonInputError`` when ``data`` nests deeper than ``max_depth`` or holds a NUL character."""
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            if "\x00" in value:
                raise JsonInputError(path or "body", _("contains a NUL character (\\u0000), which is not allowed"))
        elif isinstance(value, Mapping | list):
            if depth >= max_depth:
                raise JsonInputError(path or "body", _("nested deeper than %(limit)d levels")
                                     % {"limit": max_depth})
            if isinstance(value, Mapping):
                for key, child in value.items():
                    child_path = f"{path}.{key}" if path else str(key)
                    if "\x00" in str(key):
                        raise JsonInputError(child_path.replace("\x00", "\\u0000"),
                                             _("this key contains a NUL character (\\u0000), which is not allowed"))
                    stack.append((child, child_path, depth + 1))
            else:
                stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in enumerate(value))


def loads_checked(text: str | bytes) -> Any:
    """``json.loads`` for input from a request: too deep or NUL-bearing documents raise ``JsonInputError``;
    malformed JSON raises ``json.JSONDecodeError`` as usual."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise JsonInputError("body", _("nested deeper than %(limit)d levels") % {"limit": MAX_JSON_DEPTH}) from None
    check_json(data)
    return data


class CheckedJSONParser(JSONParser):
    """DRF's JSON parser (same strictness: no NaN or Infinity) with the depth and NUL checks."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict[str, Any] | None = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(_("JSON parse error - nested deeper than %(limit)d levels")
                             % {"limit": MAX_JSON_DEPTH}) from None
        try:
            check_json(data)
        except JsonInputError as bad:
            raise ParseError(_("JSON parse error - %(path)s: %(message)s")
                             % {"path": bad.path, "message": bad.message}) from None
        return data
