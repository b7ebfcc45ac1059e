"""Template helpers: ``{% load goldset %}{{ text|markdown }}``."""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString

from ..rendering import render_markdown

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
