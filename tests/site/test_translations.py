"""Every user-facing string has a Korean translation.

* The ``ko`` catalogue has no empty and no fuzzy entry, and ``makemessages`` run over a copy of the
  source finds no string the catalogue lacks (a new ``{% translate %}`` or ``gettext`` without a
  translation fails here, as does a changed msgid whose old translation became fuzzy).
* No template shows text outside ``{% translate %}`` / ``{% blocktranslate %}``: visible text and the
  visible attributes (title, placeholder, aria-label, alt) of every template are scanned.
"""

from __future__ import annotations

import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.core.management import call_command
from django.template.base import Lexer, TokenType

from .catalogue import CATALOGUE, parse_po

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("annotation", "datasets_build", "exports", "config")
TEMPLATE_ROOTS = ("annotation/templates", "datasets_build/templates", "exports/templates")


def untranslated(path: Path) -> list[str]:
    return [entry["msgid"] for entry in parse_po(path)
            if entry["msgid"] and not entry["obsolete"]
            and ("fuzzy" in entry["flags"] or not all(entry["msgstr"].values()) or not entry["msgstr"])]


def test_the_korean_catalogue_has_no_empty_or_fuzzy_entry():
    assert untranslated(CATALOGUE) == []


def test_parse_po_sees_empty_and_fuzzy_entries(tmp_path):
    po = tmp_path / "django.po"
    po.write_text('msgid ""\nmsgstr "header"\n\nmsgid "Done"\nmsgstr "완료"\n\nmsgid "Empty"\nmsgstr ""\n\n'
                  '#, fuzzy\nmsgid "Guess"\nmsgstr "추측"\n\nmsgid "%(n)s item"\nmsgid_plural "%(n)s items"\n'
                  'msgstr[0] ""\n', encoding="utf-8")
    assert untranslated(po) == ["Empty", "Guess", "%(n)s item"]


@pytest.mark.skipif(shutil.which("xgettext") is None, reason="GNU gettext is not installed")
def test_makemessages_finds_no_string_the_catalogue_lacks(tmp_path):
    """makemessages over a copy of the source, merged into a copy of the catalogue: nothing new, nothing fuzzy."""
    for name in SOURCES:
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "static"))
    (tmp_path / "locale" / "ko" / "LC_MESSAGES").mkdir(parents=True)
    shutil.copy(CATALOGUE, tmp_path / "locale" / "ko" / "LC_MESSAGES" / "django.po")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        call_command("makemessages", locale=["ko"], verbosity=0, no_obsolete=True)
    finally:
        os.chdir(cwd)
    assert untranslated(tmp_path / "locale" / "ko" / "LC_MESSAGES" / "django.po") == []


# -- templates --------------------------------------------------------------------------------------

VISIBLE_ATTRIBUTES = {"title", "placeholder", "aria-label", "alt", "label"}
#: Names that stay as they are in every language.
PROPER_NAMES = {"Goldset", "KLUE", "JSON", "JSONL", "CSV", "API", "URL", "SHA", "SHA256SUMS", "Markdown"}
WORD = re.compile(r"[A-Za-z가-힣]+(?:['’-][A-Za-z가-힣]+)*")
VARIABLE = "\x00"


def _without_translated(source: str) -> str:
    """The template with its tags blanked, variables marked, and blocktranslate/comment bodies removed."""
    out: list[str] = []
    depth = 0
    for token in Lexer(source).tokenize():
        if token.token_type == TokenType.BLOCK:
            name = token.contents.split()[0] if token.contents else ""
            if name in ("blocktranslate", "blocktrans", "comment"):
                depth += 1
            elif name in ("endblocktranslate", "endblocktrans", "endcomment"):
                depth -= 1
            out.append(" ")
        elif token.token_type in (TokenType.VAR, TokenType.COMMENT) or depth:
            out.append(VARIABLE)
        else:
            out.append(token.contents)
    return "".join(out)


class _VisibleText(HTMLParser):
    """Collects visible text and visible attribute values that hold a word (keys in <kbd> and code excepted)."""

    SILENT = ("script", "style", "kbd", "code")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.silent = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.silent += tag in self.SILENT
        for name, value in attrs:
            if name in VISIBLE_ATTRIBUTES and value:
                self._check(value)

    def handle_endtag(self, tag: str) -> None:
        self.silent -= tag in self.SILENT

    def handle_data(self, data: str) -> None:
        if not self.silent:
            self._check(data)

    def _check(self, text: str) -> None:
        for part in text.split(VARIABLE):
            if any(len(word) > 1 and word not in PROPER_NAMES for word in WORD.findall(part)):
                self.found.append(part.strip())


def untranslated_template_text(source: str) -> list[str]:
    parser = _VisibleText()
    parser.feed(_without_translated(source))
    return parser.found


def test_no_template_shows_text_outside_translate_tags():
    problems = {}
    for base in TEMPLATE_ROOTS:
        for path in sorted((ROOT / base).rglob("*.html")):
            if found := untranslated_template_text(path.read_text(encoding="utf-8")):
                problems[str(path.relative_to(ROOT))] = found
    assert problems == {}


def test_the_template_scan_sees_unmarked_text():
    source = ('{% load i18n %}<h1>{% translate "Agreement" %}</h1><p title="Hidden hint">{{ n }} items</p>'
              '<kbd>Alt+G</kbd>{% blocktranslate %}{{ n }} rows{% endblocktranslate %}<td>v{{ n }}</td>'
              '<button aria-label="{% translate "Close" %}">×</button><span>모호함</span>')
    assert untranslated_template_text(source) == ["Hidden hint", "items", "모호함"]


def test_translations_keep_the_placeholders_of_their_msgid():
    placeholder = re.compile(r"%\((\w+)\)[sd]|\{(\w+)\}")
    wrong = [entry["msgid"] for entry in parse_po(CATALOGUE) if entry["msgid"] and not entry["obsolete"]
             for text in entry["msgstr"].values()
             if set(placeholder.findall(text)) != set(placeholder.findall(entry["msgid"]))]
    assert wrong == []
