"""Template helpers: ``{% load goldset %}{{ text|markdown }}``, ``{{ project.task.title|task_title }}``."""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString

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
