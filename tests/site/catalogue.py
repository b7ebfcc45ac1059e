"""The Korean message catalogue read as entries (shared by the translation and glossary tests)."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

CATALOGUE = Path(__file__).resolve().parents[2] / "locale" / "ko" / "LC_MESSAGES" / "django.po"


def parse_po(path: Path) -> list[dict[str, Any]]:
    """The entries of a .po file: msgctxt, msgid, msgid_plural, msgstr (by index), flags, obsolete."""
    entries: list[dict[str, Any]] = []
    entry: dict[str, Any] | None = None
    key: str | int | None = None
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        if not line.strip():
            if entry is not None and "msgid" in entry:
                entries.append(entry)
            entry, key = None, None
            continue
        if entry is None:
            entry = {"flags": set(), "msgstr": {}, "obsolete": False}
        if line.startswith("#,"):
            entry["flags"] |= {flag.strip() for flag in line[2:].split(",")}
        elif line.startswith("#~"):
            entry["obsolete"] = True
        elif line.startswith("#"):
            continue
        elif match := re.match(r'(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+(".*")$', line):
            value = ast.literal_eval(match.group(3))
            if match.group(1).startswith("msgstr"):
                key = int(match.group(2) or 0)
                entry["msgstr"][key] = value
            else:
                key = match.group(1)
                entry[key] = value
        elif line.startswith('"'):
            value = ast.literal_eval(line)
            if isinstance(key, int):
                entry["msgstr"][key] += value
            else:
                entry[key] += value
    return entries
