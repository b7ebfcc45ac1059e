"""Round trip on the real KLUE dev files: import (``--pii detect``), a manager keeps every item the screening
held for review, release with ``--keep-splits``, and the written dev file equals the original: JSON-equal
records in the same order once the opaque rater ids are mapped back through the manager's mapping, identical
TSV lines (KLUE's JSON files carry whitespace quirks, e.g. trailing blanks after some braces, that carry no
data)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Item, Project, ScreeningStatus
from datasets_build.services import screening_review
from exports.selectors import rater_ids

pytestmark = [pytest.mark.django_db, pytest.mark.klue]

FILES = {"nli": "klue-nli-v1.1_dev.json", "sts": "klue-sts-v1.1_dev.json", "ner": "klue-ner-v1.1_dev.tsv",
         "dp": "klue-dp-v1.1_dev.tsv"}


@pytest.mark.parametrize("slug", list(FILES))
def test_import_then_release_gives_back_the_dev_file(slug, klue_dir, tmp_path):
    original = klue_dir / FILES[slug]
    imported = StringIO()
    call_command("import_items", f"klue-{slug}", str(original), "--format", "klue", "--task-type", slug,
                 "--pii", "detect", "--json", stdout=imported)
    created = json.loads(imported.getvalue())["created"]
    assert created["items"] > 0
    # Items awaiting screening review are never released: the manager reviews (keeps) them first.
    project = Project.objects.get(slug=f"klue-{slug}")
    held = Item.objects.filter(project=project, screening_status=ScreeningStatus.NEEDS_REVIEW)
    assert held.exists()
    for item in held:
        screening_review(item=item, decision="keep", reason="KLUE 원본 검토", by=project.created_by)
    stdout = StringIO()
    call_command("build_release", f"klue-{slug}", "--version", "1.0.0", "--keep-splits", "--format", "klue",
                 "--out", str(tmp_path), "--json", stdout=stdout)
    result = json.loads(stdout.getvalue())
    assert result["splits"] == {"dev": created["items"]}
    written = Path(result["out"]) / FILES[slug]
    assert FILES[slug] in result["files"]
    if original.suffix == ".json":
        # Released rater ids are opaque; the manager's mapping names the corpus annotator behind each.
        corpus_ids = {row["rater"]: row["username"].rpartition(":")[2] for row in rater_ids(project)}
        records = json.loads(written.read_text(encoding="utf-8"))
        for record in records:
            if "annotators" in (record.get("annotations") or {}):
                record["annotations"]["annotators"] = [corpus_ids[r] for r in record["annotations"]["annotators"]]
        assert records == json.loads(original.read_text(encoding="utf-8"))
        return
    ours = written.read_text(encoding="utf-8").splitlines()
    theirs = original.read_text(encoding="utf-8").splitlines()
    first = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), None)
    assert first is None, f"line {first + 1}: {ours[first:first + 3]!r} vs {theirs[first:first + 3]!r}"
    assert len(ours) == len(theirs)
