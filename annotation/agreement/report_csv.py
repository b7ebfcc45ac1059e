"""The agreement report as one CSV table (the dashboard's "Download as CSV" and ``GET
/api/projects/{id}/agreement/csv/``): every coefficient, its per-type / per-category / per-slot / per-question-type
values, the per-label α, every pair's κ and every guideline version with the changes between them — the numbers the
dashboard and the JSON report show, unrounded, one row each.

Columns: ``section, name, subject, value, ci95_low, ci95_high, items, annotations, note``. ``subject`` is what a
row is about (a label, an entity type, a pair ``a × b`` by username, a version ``v2`` or a change ``v1 → v2``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

from django.http import HttpResponse

COLUMNS = ["section", "name", "subject", "value", "ci95_low", "ci95_high", "items", "annotations", "note"]
#: Per-subject values a coefficient may carry beside its own (the report's coefficient extras).
PER_KEYS = ("per_type", "per_category", "per_slot", "per_relation", "per_question_type")


def _text(value: Any) -> str:
    """A text cell that a spreadsheet will not run as a formula (a label may begin with =, +, - or @)."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _ci(ci: Any) -> list[Any]:
    return [ci[0], ci[1]] if isinstance(ci, list | tuple) and len(ci) == 2 else [None, None]


def _rows(report: dict[str, Any]) -> Iterator[list[Any]]:
    names = report.get("annotator_names") or {}
    for coefficient in report.get("coefficients") or []:
        name = coefficient["name"]
        yield ["coefficient", name, "", coefficient.get("value"), *_ci(coefficient.get("ci95")),
               coefficient.get("units") if coefficient.get("unit") == "item" else None, None,
               coefficient.get("level") or ""]
        for key in PER_KEYS:
            values = coefficient.get(key)
            if not isinstance(values, dict):
                continue
            intervals = coefficient.get(f"{key}_ci95") or {}
            for subject, value in values.items():
                if isinstance(value, dict):  # per slot: {"alpha", "units", "ci95"}
                    yield [key, name, subject, value.get("alpha"), *_ci(value.get("ci95")), None, None, ""]
                else:
                    yield [key, name, subject, value, *_ci(intervals.get(subject)), None, None, ""]
    per_label = report.get("per_label") or {}
    for entry in per_label.get("labels") or []:
        yield ["per_label", "one_vs_rest_alpha", entry["label"], entry.get("value"), *_ci(entry.get("ci95")),
               entry.get("items"), entry.get("annotations"), per_label.get("kind") or ""]
    pairs = report.get("pair_kappa") or {}
    for pair in pairs.get("pairs") or []:
        subject = f"{names.get(str(pair['a']), pair['a'])} × {names.get(str(pair['b']), pair['b'])}"
        yield ["pair", pairs.get("metric") or "cohen_kappa", subject, pair.get("value"), *_ci(pair.get("ci95")),
               pair.get("items"), None, f"observed agreement {pair.get('observed')}"]
    versions = report.get("guideline_versions") or {}
    for entry in versions.get("versions") or []:
        yield ["guideline_version", entry.get("name") or "", f"v{entry['version']}", entry.get("value"),
               *_ci(entry.get("ci95")), entry.get("items"), entry.get("annotations"), ""]
    for change in versions.get("changes") or []:
        yield ["version_change", "difference", f"v{change['from']} → v{change['to']}", change.get("difference"),
               *_ci(change.get("ci95")), None, None, change.get("verdict") or ""]


def report_csv(report: dict[str, Any]) -> str:
    """The report's numbers as CSV text (header first)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for section, name, subject, value, low, high, items, marked, note in _rows(report):
        writer.writerow([section, name, _text(subject), "" if value is None else repr(float(value)),
                         "" if low is None else repr(float(low)), "" if high is None else repr(float(high)),
                         "" if items is None else int(items), "" if marked is None else int(marked), _text(note)])
    return out.getvalue()


def csv_response(text: str, slug: str) -> HttpResponse:
    """A download of the CSV, UTF-8 with a byte-order mark so that spreadsheets read Korean labels as such."""
    response = HttpResponse("\ufeff" + text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{slug}-agreement.csv"'
    return response
