"""What a reader of a Korean page sees that is not Korean: the checker behind the "every Korean page is
Korean" tests.

:func:`offending_text` takes a rendered HTML page and returns the visible text a Korean reader should not
meet: a snake_case identifier (``krippendorff_alpha``, ``needs_review``, ``start_idx``), raw data (a JSON
object or a Python dict such as ``{'label': 'IT과학'}``), or an English word or phrase ("137 item",
"entropy of the labels (0 = unanimous, 1 = uniform)").

Visible text is every text node outside ``<script>``, ``<style>``, ``<head>`` (the page's ``<title>``
counts) and ``<textarea>`` (what a form field holds is the user's, as an input's value is), including
``<template>``, ``<noscript>``, SVG text and elements hidden until something happens (an error message is
text the reader will see), plus the attributes a reader sees or hears: ``title``,
``placeholder``, ``aria-label``, ``alt``, ``label`` and the ``value`` of input buttons.

Exempt:

* a subtree marked as being in another language (``lang="en"`` on a dataset card written in English);
* proper names and abbreviations that stay as they are in Korean (:data:`PROPER_NAMES`, all-capital codes such
  as ``PS``, ``NP_SBJ``, ``PII``, version numbers such as ``v1``, and ``<kbd>`` key names);
* the users' own data, passed as ``data``: project and user names, corpus ids, item texts — what people typed
  is shown as they typed it. Each string is blanked where it occurs as a whole (not inside a longer word); its
  words stay checked elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from html.parser import HTMLParser

#: Names and symbols that stay as they are on a Korean page.
PROPER_NAMES = frozenset({
    "Goldset", "KLUE", "JSON", "JSONL", "CSV", "API", "URL", "SHA", "SHA256SUMS", "Markdown", "Parquet", "parquet",
    "F1", "Krippendorff", "Fleiss", "Cohen", "Pearson", "Spearman", "Dawid", "Skene",
    "Jaccard", "MinHash", "doccano", "README", "ZIP", "UTF",
    "CC", "BY", "SA", "ND", "NC", "Swagger", "ReDoc", "OpenAPI", "Celery", "Redis", "Django", "Chrome",
    "WoS", "Alt", "Ctrl", "Shift", "Enter", "Esc", "Tab", "CoNLL", "SQuAD",
    "jsonl", "json", "csv", "klue", "zip",
})
#: Proper names of more than one word, blanked before the words are checked.
PROPER_PHRASES = ("Label Studio", "Hugging Face", "JSON Lines", "Universal Dependencies")
#: Abbreviations and label codes: capitals and digits, optionally joined by ``_`` or ``-`` (PS, NP_SBJ, KLUE-NER),
#: and version numbers (v1, v1.1).
CODE = re.compile(r"^(?:[A-Z0-9]+(?:[_-][A-Z0-9]+)*|v\d+(?:\.\d+)*)$")
SNAKE = re.compile(r"(?<![\w.:/-])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w/-])")
RAW_DATA = re.compile(r"[{\[]\s*['\"][^'\"]*['\"]\s*:|['\"]\s*:\s*['\"{\[]")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:['’][A-Za-z]+)*")
#: A checksum or commit (hexadecimal digits, at least one of them a number), whole or shortened with "…".
HEX = re.compile(r"^[0-9a-f]*[0-9][0-9a-f]*…?$")
#: Tokens that are names of files or places (a path, a file name, an address): data, not sentences.
PATHLIKE = re.compile(r"^\S*(?:/|\\|://|\.(?:jsonl?|csv|tsv|parquet|zip|md|txt|conllu?|xlsx?)\b)\S*$", re.I)

LATIN = re.compile(r"[A-Za-z]")
VISIBLE_ATTRIBUTES = frozenset({"title", "placeholder", "aria-label", "alt", "label"})
BUTTON_INPUTS = frozenset({"submit", "button", "reset"})
SILENT = frozenset({"script", "style", "head", "textarea"})
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
                  "track", "wbr"})


def findings_in(text: str) -> list[str]:
    """The offending parts of one piece of visible text (already stripped of exempt data)."""
    found: list[str] = []
    text = " ".join(text.split())
    for phrase in PROPER_PHRASES:
        text = text.replace(phrase, " ")
    if not text.strip():
        return found
    if RAW_DATA.search(text):
        found.append(f"raw data: {text}")
    tokens = [token for token in text.split(" ") if not PATHLIKE.match(token) and not (
        len(token.strip(".,;:()…")) >= 7 and HEX.match(token.strip(".,;:()")))]
    kept = " ".join(tokens)
    found += [f"identifier: {match}" for match in SNAKE.findall(kept) if not CODE.match(match)]
    kept = SNAKE.sub(" ", kept)
    english = [word for word in WORD.findall(kept)
               if len(word) > 1 and word not in PROPER_NAMES and not CODE.match(word)]
    if english:
        found.append(f"English: {text}")
    return found


class _Visible(HTMLParser):
    """Walks the page keeping a stack of open elements: which are silent and which are in another language."""

    def __init__(self, data: re.Pattern[str] | None) -> None:
        super().__init__(convert_charrefs=True)
        self.data = data
        self.stack: list[tuple[str, bool, bool]] = []  # (tag, silent, exempt)
        self.found: list[str] = []

    @property
    def silent(self) -> bool:
        return any(silent for _, silent, _ in self.stack)

    @property
    def exempt(self) -> bool:
        return any(exempt for _, _, exempt in self.stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        lang = (values.get("lang") or "").strip().lower()
        exempt = bool(lang) and tag != "html" and not (lang == "ko" or lang.startswith("ko-"))
        in_title = tag == "title" and not any(t == "svg" for t, _, _ in self.stack)
        silent = tag in SILENT and not in_title
        if not (self.silent or self.exempt or exempt):
            for name, value in attrs:
                if value and (name in VISIBLE_ATTRIBUTES or (
                        name == "value" and tag == "input" and values.get("type", "").lower() in BUTTON_INPUTS)):
                    self._check(value)
        if tag == "title" and in_title:  # the browser tab's title, although inside <head>
            self.stack = [(t, False, e) if t == "head" else (t, s, e) for t, s, e in self.stack]
        if tag not in VOID:
            self.stack.append((tag, silent or tag == "kbd", exempt))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID and self.stack and self.stack[-1][0] == tag:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        # An end tag closes the nearest open element of its name and whatever was left open inside it.
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index][0] == tag:
                del self.stack[index:]
                break
        if tag == "title":
            self.stack = [(t, True, e) if t == "head" else (t, s, e) for t, s, e in self.stack]

    def handle_data(self, text: str) -> None:
        if not (self.silent or self.exempt):
            self._check(text)

    def _check(self, text: str) -> None:
        if self.data is not None:
            text = self.data.sub(" ", text)
        self.found += findings_in(text)


def offending_text(html: str, *, data: Iterable[str] = ()) -> list[str]:
    """Every piece of visible text on a Korean page that is an identifier, raw data or English.

    ``data`` are the users' own strings (names, ids, item texts) shown as they were entered; the longest are
    blanked first so that a name containing another is blanked whole.
    """
    # Only data with a Latin letter can hold what the checker looks for; longest first, whole words only.
    strings = sorted({value.strip() for value in data if value and LATIN.search(value)}, key=len, reverse=True)
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, strings)) + r")(?!\w)") if strings else None
    parser = _Visible(pattern)
    parser.feed(html)
    parser.close()
    return parser.found
