"""drf-spectacular post-processing of the OpenAPI schema (SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"])."""

from __future__ import annotations

from typing import Any

#: Keys that do not narrow what a schema accepts.
_ANNOTATIONS = {"description", "readOnly", "writeOnly", "title", "default", "example", "examples"}


def nullable_any(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """OpenAPI 3.1 writes a nullable field as ``oneOf: [schema, {type: null}]``. For a field of any JSON value
    (a JSONField) the first schema already accepts null, so null matched both and every null broke ``oneOf``'s
    exactly-one rule: such a field becomes its own schema, which null satisfies."""

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            alternatives = node.get("oneOf")
            if isinstance(alternatives, list) and {"type": "null"} in alternatives:
                others = [a for a in alternatives if a != {"type": "null"}]
                if len(others) == 1 and isinstance(others[0], dict) and not set(others[0]) - _ANNOTATIONS:
                    rest = {k: v for k, v in node.items() if k != "oneOf"}
                    return walk({**others[0], **rest})
            return {key: walk(value) for key, value in node.items()}
        if isinstance(node, list):
            return [walk(value) for value in node]
        return node

    return walk(result)
