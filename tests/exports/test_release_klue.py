"""Round trip on the real KLUE dev files: import (``--pii detect``), a manager keeps every item the screening
held for review, release with ``--keep-splits``, and the written dev file equals the original: JSON-equal
records in the same order, identical TSV lines (KLUE's JSON files carry whitespace quirks, e.g. trailing
blanks after some braces, that carry no data) — except for the raters' ids, which the import never stores (a
corpus's rater id may be an e-mail address): each is released as one opaque id, the same for the same rater
in every record."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Item, Project, ScreeningStatus
from datasets_build.services import screening_review

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
        ours, theirs = json.loads(written.read_text(encoding="utf-8")), json.loads(original.read_text(encoding="utf-8"))
        _map_rater_ids(ours, theirs)
        assert ours == theirs
        return
    ours = written.read_text(encoding="utf-8").splitlines()
    theirs = original.read_text(encoding="utf-8").splitlines()
    first = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), None)
    assert first is None, f"line {first + 1}: {ours[first:first + 3]!r} vs {theirs[first:first + 3]!r}"
    assert len(ours) == len(theirs)


def _map_rater_ids(ours: list[dict], theirs: list[dict]) -> None:
    """Put the original rater ids back into ``ours``, checking that each rater has one opaque id throughout."""
    released: dict[str, str] = {}
    for record, original in zip(ours, theirs, strict=True):
        block = original.get("annotations")
        if isinstance(block, dict) and "annotators" in block:
            for opaque, raw in zip(record["annotations"]["annotators"], block["annotators"], strict=True):
                assert released.setdefault(raw, opaque) == opaque, (raw, opaque)
            record["annotations"]["annotators"] = block["annotators"]
    assert len(set(released.values())) == len(released)
    assert not set(released) & set(released.values()), "a rater's original id was released"
