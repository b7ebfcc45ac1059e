"""Issue 35, finding 12: what docs/formats.md says about records coming back and about imported users is what
the code does. A release renames rater ids (and nothing else); imported annotators are ``<project>:<keyed hash>``
users, the corpus label's is ``<source>:corpus``."""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Project, User
from datasets_build.klue_formats import write_klue_file
from tests.builders import build_release, sample_records

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
INTEROP = ROOT / "tests" / "data" / "interop"


def sts_record(i: int, raters: list[str], scores: list[int]) -> dict:
    mean = sum(scores) / len(scores)
    return {"guid": f"klue-sts-v1_dev_{i:05d}", "source": "airbnb-rtt", "sentence1": f"숙소가 {i}번 정말 깨끗했어요.",
            "sentence2": f"숙소는 {i}번 아주 깔끔했습니다.",
            "labels": {"label": round(mean, 1), "real-label": mean, "binary-label": int(mean >= 3.0)},
            "annotations": {"agreement": ":".join(str(scores.count(n)) for n in range(6)), "annotators": raters,
                            "annotations": scores}}


def import_and_release(slug: str, task: str, records: list[dict], tmp_path: Path) -> tuple[Path, Path]:
    source = tmp_path / "in" / (f"klue-{task}-v1.1_dev.json")
    source.parent.mkdir()
    write_klue_file(source, task, records)
    call_command("import_items", slug, str(source), "--format", "klue", "--task-type", task, "--pii", "off",
                 stdout=StringIO())
    out = build_release(Project.objects.get(slug=slug), tmp_path / "out", "--version", "1.0.0", "--keep-splits",
                        "--format", "klue")
    return source, Path(out["out"]) / source.name


def test_a_release_gives_klue_records_back_with_their_rater_ids_renamed(tmp_path):
    records = [sts_record(0, ["17", "07", "10"], [5, 4, 5]), sts_record(1, ["07", "12", "17"], [2, 3, 1]),
               sts_record(2, ["19", "10", "12"], [0, 1, 0])]
    source, released = import_and_release("sts-doc", "sts", records, tmp_path)
    back = json.loads(released.read_text(encoding="utf-8"))
    # Rater ids in the order of each rater's first annotation in the project; nothing else changes.
    renamed = {"17": "r01", "07": "r02", "10": "r03", "12": "r04", "19": "r05"}
    expected = [{**r, "annotations": {**r["annotations"], "annotators": [renamed[a] for a in
                                                                          r["annotations"]["annotators"]]}}
                for r in records]
    assert back == expected
    assert [list(r) for r in back] == [list(r) for r in records]  # same key order
    assert released.read_bytes() != source.read_bytes()


def test_a_release_of_a_klue_file_without_rater_ids_gives_the_same_bytes(tmp_path):
    source, released = import_and_release("nli-doc", "nli", sample_records("nli", 12, prefix="klue-nli"), tmp_path)
    assert released.read_bytes() == source.read_bytes()


def test_imported_users_are_named_as_the_doc_says():
    usernames = {}
    for slug, path, fmt in (("doc-dc", INTEROP / "doccano_tc.zip", "doccano"),
                            ("doc-ls", INTEROP / "labelstudio_tc.json", "labelstudio"),
                            ("doc-corpus", INTEROP / "goldset_doccano_ner.jsonl", "doccano")):
        task = "ner" if "ner" in path.name else "tc"
        call_command("import_items", slug, str(path), "--format", fmt, "--task-type", task, "--source",
                     f"{slug}-src", "--pii", "off", stdout=StringIO())
        usernames[slug] = set(User.objects.filter(annotations__item__project__slug=slug)
                              .values_list("username", flat=True))
    for slug in ("doc-dc", "doc-ls"):  # a member's or a Label Studio user's labels: <project>:<keyed hash>
        assert usernames[slug] and all(re.fullmatch(rf"{slug}:[0-9a-f]{{20}}", name) for name in usernames[slug])
    assert not any(who in name for names in usernames.values() for name in names
                   for who in ("kim", "lee", "park", "admin", "user"))
    assert usernames["doc-corpus"] == {"doc-corpus-src:corpus"}  # a single file's labels are the corpus's

    doc = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    assert "`<project>:<keyed hash>`" in doc and "`<source>:corpus`" in doc and "rater ids are renamed" in doc
    assert "`<source>:<username>`" not in doc and "`<source>:user<completed_by>`" not in doc
