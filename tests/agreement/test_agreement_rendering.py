"""The review pages' HTML of a payload (``annotation/agreement/rendering.py``) apart from the statistics: the
measures import no HTML machinery, the rendering follows the measure's kind, and span marks take their colour
from the project's label schema, whatever its labels are."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.urls import reverse

from annotation import services
from annotation.agreement.measures import Measure
from annotation.agreement.measures.spans import SpanMeasure
from annotation.agreement.rendering import SPAN_PALETTE_SIZE, payload_html
from annotation.models import Annotation
from tests.builders import client_for

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
    assert spans == ('<p class="spans"><mark class="ent ent-c0" data-type="AB" title="AB">가나<sub>AB</sub></mark>'
                     "다</p>")
    assert payload_html(OwnKind(), {"answer": "<b>"}, {}, {}) == '<span class="chip">answer &lt;b&gt;</span>'


# -- span colours -----------------------------------------------------------------------------------------------

STATIC = Path(settings.BASE_DIR) / "annotation" / "static"


def _stylesheets(page: str) -> str:
    hrefs = re.findall(r'<link rel="stylesheet" href="([^"]+)"', page)
    prefix = "/" + settings.STATIC_URL.strip("/") + "/"
    return "\n".join(Path(finders.find(href.removeprefix(prefix))).read_text(encoding="utf-8") for href in hrefs)


def _rules(css: str) -> list[tuple[list[str], str]]:
    """(selectors, declarations) of every rule (the stylesheets have no nested blocks but media queries)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    css = re.sub(r"@media[^{]*\{((?:[^{}]*\{[^}]*\})*)\s*\}", r"\1", css)
    return [([s.strip() for s in selectors.split(",")], body) for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}",
                                                                                                 css)]


def _background(css_class: str, rules: list[tuple[list[str], str]]) -> str | None:
    """The background a rule gives to elements of exactly ``css_class`` (``.x`` or ``mark.x``)."""
    for selectors, body in rules:
        found = re.search(r"background(?:-color)?\s*:\s*([^;]+)", body)
        if found and any(re.fullmatch(rf"(?:mark)?\.{re.escape(css_class)}", s) for s in selectors):
            return found.group(1).strip()
    return None


@pytest.mark.django_db
def test_span_marks_of_labels_never_seen_before_are_coloured_from_the_schema(make_project, make_user) -> None:
    """A span task whose schema has labels no stylesheet names: each label's marks get a colour the review page's
    stylesheets define, by the label's place in the schema, and two labels get two colours."""
    project = make_project("ner", k=2, slug="unseen-labels")
    project.label_schema = {"labels": ["ZZ", "QQ"]}
    project.save(update_fields=["label_schema"])
    item = services.item_create(project=project, payload={"sentence": "가나다 라마바"}, external_id="s1")
    for n, entities in enumerate(([{"start": 0, "end": 3, "type": "ZZ"}, {"start": 4, "end": 7, "type": "QQ"}],
                                  [{"start": 0, "end": 3, "type": "QQ"}])):
        Annotation.objects.create(item=item, annotator=make_user(f"unseen-{n}"), stage="label",
                                  payload={"entities": entities})

    page = client_for(project.created_by).get(reverse("annotation:review-item", args=[project.pk, item.pk]))
    html = page.content.decode()
    marks = re.findall(r'<mark class="([^"]+)"[^>]*>[^<]*<sub>(\w+)</sub></mark>', html)
    assert sorted(label for _, label in marks) == ["QQ", "QQ", "ZZ"]
    rules = _rules(_stylesheets(html))
    colours: dict[str, set[str]] = {}
    for classes, label in marks:
        assert not any(label in c for c in classes.split()), classes  # no class named after the label
        backgrounds = {_background(c, rules) for c in classes.split()} - {None}
        assert len(backgrounds) == 1, (classes, backgrounds)
        colours.setdefault(label, set()).update(backgrounds)
    assert all(len(c) == 1 for c in colours.values()) and colours["ZZ"] != colours["QQ"], colours


def _luminance(colour: str) -> float:
    digits = colour.lstrip("#")
    digits = "".join(d * 2 for d in digits) if len(digits) == 3 else digits
    channels = [int(digits[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a: str, b: str) -> float:
    light, dark = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_one_span_palette_for_the_widget_and_the_review_pages_with_readable_text() -> None:
    """goldset.css defines exactly the palette both the NER widget and the review marks count on, and the marks'
    type subscript stays readable (WCAG AA, 4.5:1) on every colour."""
    rules = _rules((STATIC / "annotation" / "goldset.css").read_text(encoding="utf-8"))
    palette = sorted({m for selectors, _ in rules for s in selectors for m in re.findall(r"\.ent-c(\d+)\b", s)},
                     key=int)
    assert palette == [str(i) for i in range(SPAN_PALETTE_SIZE)]
    widget = (STATIC / "annotation" / "widgets" / "ner.js").read_text(encoding="utf-8")
    assert re.search(r"const PALETTE_SIZE = (\d+);", widget).group(1) == str(SPAN_PALETTE_SIZE)
    review = _rules((STATIC / "annotation" / "review.css").read_text(encoding="utf-8"))
    subscript = next(re.search(r"\bcolor\s*:\s*(#[0-9a-fA-F]{3,6})", body).group(1)
                     for selectors, body in review if "mark.ent sub" in selectors)
    for i in range(SPAN_PALETTE_SIZE):
        background = _background(f"ent-c{i}", rules)
        assert background and _contrast(subscript, background) >= 4.5, (i, background)
        assert _contrast("#000000", background) >= 4.5
