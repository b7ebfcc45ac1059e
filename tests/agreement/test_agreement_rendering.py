"""The review pages' HTML of a payload (``annotation/agreement/rendering.py``) apart from the statistics: the
measures import no HTML machinery, the rendering follows the measure's kind, and span marks take their colour
from the project's label schema, whatever its labels are."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
from pathlib import Path
from typing import Any

from annotation.agreement.measures import Measure
from annotation.agreement.measures.spans import SpanMeasure
from annotation.agreement.rendering import payload_html

#: Modules that build HTML; the statistics reach none of them.
HTML_MACHINERY = ("django.utils.html", "django.utils.safestring", "django.template", "django.shortcuts",
                  "django.http", "markupsafe", "annotation.agreement.rendering", "annotation.rendering")


def _statistics_modules() -> list[Path]:
    package = importlib.import_module("annotation.agreement.measures")
    if not hasattr(package, "__path__"):  # a single module
        return [Path(package.__file__)]
    return [Path(package.__file__), *(Path(importlib.import_module(f"{package.__name__}.{m.name}").__file__)
                                      for m in pkgutil.iter_modules(package.__path__))]


def _imports(path: Path, package: str) -> set[str]:
    """Every module ``path`` imports, anywhere in it (inside functions too), relative imports resolved."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package) if node.level \
                else node.module or ""
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def test_the_statistics_import_no_html_machinery() -> None:
    modules = _statistics_modules()
    assert modules
    offending = {}
    for path in modules:
        package = "annotation.agreement.measures" if path.parent.name == "measures" else "annotation.agreement"
        bad = {name for name in _imports(path, package)
               if any(name == html or name.startswith(f"{html}.") for html in HTML_MACHINERY)}
        if bad:
            offending[path.name] = sorted(bad)
    assert offending == {}


def test_the_measure_kind_chooses_the_rendering() -> None:
    """A task type's own measure is rendered as the kind it extends; one of a new kind as its summary."""

    class OwnSpans(SpanMeasure):
        pass

    class OwnKind(Measure):
        def describe(self, payload: dict[str, Any]) -> str:
            return f"answer {payload['answer']}"

    spans = payload_html(OwnSpans(), {"entities": [{"start": 0, "end": 2, "type": "AB"}]}, {"sentence": "가나다"},
                         {"labels": ["AB"]})
    assert spans == ('<p class="spans"><mark class="ent ent-AB" title="AB">가나<sub>AB</sub></mark>'
                     "다</p>")
    assert payload_html(OwnKind(), {"answer": "<b>"}, {}, {}) == '<span class="chip">answer &lt;b&gt;</span>'
