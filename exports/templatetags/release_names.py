"""Template filters naming a release's stored identifiers in the reader's language (exports/names.py)."""

from __future__ import annotations

from django import template

from .. import names

register = template.Library()


@register.filter
def split_name(key: str) -> str:
    return names.split_name(key)


@register.filter
def file_kind(key: str) -> str:
    return names.file_kind_name(key)


@register.filter
def metric_name(key: str) -> str:
    return names.metric_name(key)
