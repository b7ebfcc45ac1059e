"""Template helpers: ``{% load goldset %}{{ text|markdown }}``, ``{{ project.task.title|task_title }}``, and the
human names of stored identifiers (:mod:`annotation.display`): ``{{ c.name|display:"coefficient" }}``,
``{{ reason|message }}``, ``{{ username|annotator }}``, ``{% units n unit %}``."""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString

from .. import display
from ..rendering import render_markdown
from ..tabs import project_tabs
from ..workspace_strings import stage_title, task_title

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str | None) -> SafeString:
    return render_markdown(text)


@register.filter
def percent(part: int | float, whole: int | float) -> int:
    """Whole-number percentage for progress bars; 0 when there is nothing to count."""
    if not whole:
        return 0
    return max(0, min(100, round(100 * part / whole)))


@register.filter(name="task_title")
def task_title_filter(title: str) -> str:
    """A task type's title in the request's language."""
    return task_title(title)


@register.filter(name="stage_title")
def stage_title_filter(title: str) -> str:
    """A stage's title in the request's language."""
    return stage_title(title)


@register.filter
def label_name(value: object, names: dict[str, str]) -> str:
    """``{{ label|label_name:names }}``: a label value's display name (``workspace_strings.label_display``),
    or the value itself when it has none."""
    return names.get(str(value), str(value))


@register.simple_tag(name="project_tabs")
def project_tabs_tag(project_id: int, role: str | None, active: str) -> list[dict[str, object]]:
    """``{% project_tabs project.pk role tab as tabs %}``: every app's tabs this role sees."""
    return project_tabs(project_id, role, active)


@register.filter(name="display")
def display_filter(value: object, kind: str) -> str:
    """A stored identifier's human name: ``{{ c.level|display:"level" }}``."""
    return display.display_name(kind, value)


@register.filter(name="message")
def message_filter(text: object) -> str:
    """A sentence the agreement or gold code stored in English, in the reader's language."""
    return display.display_message(text)


@register.filter(name="message_lang")
def message_lang(text: object) -> str:
    """``lang="{{ text|message_lang }}"``: ``en`` for a stored sentence :func:`message_filter` cannot translate
    (an import's validation error), so that a Korean page marks what stays English."""
    return "en" if text and display.display_message(text) == str(text) else ""


@register.filter(name="annotator")
def annotator_filter(username: object) -> str:
    """An annotator's name on the review pages; a corpus's own labels named as such."""
    return display.annotator_name(str(username))


@register.simple_tag(name="units")
def units_tag(n: int, unit: str) -> str:
    """``{% units c.units c.unit %}``: a count with its unit, in the reader's language."""
    return display.units_text(n, unit)
