"""Markdown → safe HTML for guidelines (and, later, anything annotators read).

Two layers on purpose: markdown-it-py never passes raw HTML through (``html`` off) and refuses
``javascript:`` links, and nh3 then re-sanitises the output against an allow-list, so a bug or a
future option in either one alone cannot open a script-injection hole.
"""

from __future__ import annotations

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])

ALLOWED_TAGS = frozenset({
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "b", "i", "del", "s",
    "code", "pre", "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td",
})
# No style/class/on* attributes anywhere: formatting comes from our stylesheet only.
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
ALLOWED_URL_SCHEMES = frozenset({"http", "https", "mailto"})


def render_markdown(text: str | None) -> SafeString:
    """Render CommonMark (+ tables, strikethrough) to sanitised HTML that is safe to embed as is."""
    if not text:
        return mark_safe("")
    html = _MARKDOWN.render(text)
    cleaned = nh3.clean(
        html, tags=set(ALLOWED_TAGS), attributes={k: set(v) for k, v in ALLOWED_ATTRIBUTES.items()},
        url_schemes=set(ALLOWED_URL_SCHEMES), link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(cleaned)
