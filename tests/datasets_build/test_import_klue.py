"""The acceptance counts on the real KLUE dev files (skipped without KLUE_DATA_DIR), and malformed KLUE files."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Annotation, Item, Project, User

pytestmark = pytest.mark.django_db


def import_klue(project: str, path: Path, task: str, *extra: str) -> dict:
    out = StringIO()
    call_command("import_items", project, str(path), "--format", "klue", "--task-type", task, "--pii", "detect",
                 "--json", *extra, stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.klue
def test_nli_dev_gives_3000_items_and_15000_annotations(klue_dir):
    result = import_klue("klue-nli", klue_dir / "klue-nli-v1.1_dev.json", "nli")
    assert result["errors"] == []
    assert result["created"] == {"items": 3000, "annotations": 15000}
    project = Project.objects.get(slug="klue-nli")
    item = Item.objects.get(project=project, external_id="klue-nli-v1_dev_00002")
    assert item.split == "dev" and item.source.name == "KLUE" and item.source.license == "CC-BY-SA-4.0"
    assert Annotation.objects.filter(item=item, imported=True).count() == 5
    assert not User.objects.filter(is_imported=True, is_active=True).exists()


@pytest.mark.klue
def test_sts_dev_gives_519_items_with_one_annotation_per_score(klue_dir):
    path = klue_dir / "klue-sts-v1.1_dev.json"
    scores = sum(len(r["annotations"]["annotations"]) for r in json.loads(path.read_text(encoding="utf-8")))
    result = import_klue("klue-sts", path, "sts")
    assert result["errors"] == []
    assert result["created"]["items"] == 519
    stored = Annotation.objects.filter(item__project__slug="klue-sts").count()
    assert result["created"]["annotations"] == scores == stored


@pytest.mark.klue
def test_ner_dev_gives_5000_items(klue_dir):
    result = import_klue("klue-ner", klue_dir / "klue-ner-v1.1_dev.tsv", "ner")
    assert result["errors"] == []
    assert result["created"] == {"items": 5000, "annotations": 5000}


@pytest.mark.klue
def test_dp_dev_gives_2000_items(klue_dir):
    result = import_klue("klue-dp", klue_dir / "klue-dp-v1.1_dev.tsv", "dp")
    assert result["errors"] == []
    assert result["created"] == {"items": 2000, "annotations": 2000}
    item = Item.objects.get(project__slug="klue-dp", external_id="klue-dp-v1_dev_00000")
    assert item.payload["tokens"][1] == {"index": 2, "form": "유희열이", "lemma": "유희열 이", "pos": "NNP+JKS"}


@pytest.mark.klue
def test_wos_sample_gives_10_items(klue_dir):
    result = import_klue("klue-wos", klue_dir / "wos-v1.1_dev_sample_10.json", "dst")
    assert result["errors"] == []
    assert result["created"]["items"] == 10


def test_truncated_klue_json_imports_nothing(tmp_path):
    path = tmp_path / "klue-nli-v1.1_dev.json"
    path.write_text('[{"guid": "klue-nli-v1_dev_00000", "premise": "전제 문장", "hypothesis": "가설 문장",\n'
                    '  "gold_label": "neutral", "author": "neutral"},\n {"guid": "klue-nli-v1_dev_00001", "prem',
                    encoding="utf-8")
    with pytest.raises(CommandError, match="nothing imported"):
        import_klue("trunc", path, "nli")
    assert not Item.objects.filter(project__slug="trunc").exists()


def test_a_bad_dp_head_in_a_klue_tsv_is_reported_by_line(tmp_path):
    from datasets_build.klue_formats import DP_HEADER

    rows = ["1\t동생이\t동생 이\tNNG+JKS\t9\tNP_SBJ", "2\t잔다.\t자 ㄴ다 .\tVV+EF+SF\t0\tVP"]
    path = tmp_path / "dp.tsv"
    path.write_text("\n".join([*DP_HEADER, "## klue-dp-v1_dev_00000_test\t동생이 잔다.", *rows, "", ""]),
                    encoding="utf-8")
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("import_items", "dp-bad", str(path), "--format", "klue", "--task-type", "dp", "--json",
                     stdout=out)
    result = json.loads(out.getvalue())
    assert result["created"] == {"items": 0, "annotations": 0}
    assert result["errors"] == [{"record": 7, "field": "head", "message": "9 points past the last eojeol (2)"}]


def test_an_ner_tag_sequence_that_does_not_match_its_sentence(tmp_path):
    from datasets_build.klue_formats import NER_HEADER

    rows = ["경\tB-OG", "찰\tI-OG", "은\tO", " \tO", "왔\tO", "다\tO"]
    path = tmp_path / "ner.tsv"
    path.write_text("\n".join([*NER_HEADER, "## klue-ner-v1_dev_00000-test\t<경찰:OG>이 왔다", *rows, "", ""]),
                    encoding="utf-8")
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("import_items", "ner-bad", str(path), "--format", "klue", "--task-type", "ner", "--json",
                     stdout=out)
    result = json.loads(out.getvalue())
    assert result["created"]["items"] == 0 and not Item.objects.filter(project__slug="ner-bad").exists()
    [error] = result["errors"]
    assert error["record"] > 0 and error["field"] in ("", "tags", "chars")
