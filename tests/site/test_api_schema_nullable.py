"""A nullable field of any JSON value is one schema in the OpenAPI 3.1 document, not ``oneOf: [any, null]``, under
which a null matches both alternatives and breaks the schema (the fuzzer's ST108 on annotations and audit)."""

from __future__ import annotations

import json

import jsonschema
from django.test import Client


def test_no_oneof_accepts_null_twice(db, settings):
    settings.GOLDSET_API_SCHEMA_PUBLIC = True
    schema = json.loads(Client().get("/api/schema/?format=json").content)
    properties = schema["components"]["schemas"]["Annotation"]["properties"]
    jsonschema.validate(None, properties["suggestion_parts"])
    bad = []

    def walk(node, path):
        if isinstance(node, dict):
            alternatives = node.get("oneOf") or []
            if sum(_accepts_null(a) for a in alternatives) > 1:
                bad.append(path)
            for key, value in node.items():
                walk(value, f"{path}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]")

    walk(schema["components"], "")
    assert bad == []


def _accepts_null(schema) -> bool:
    if not isinstance(schema, dict) or "$ref" in schema:  # a reference names an object's schema
        return False
    try:
        jsonschema.validate(None, schema)
    except jsonschema.ValidationError:
        return False
    return True
