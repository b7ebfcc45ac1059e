"""The import pipeline through its users' paths: the command, the service, JSONL and CSV files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Annotation, Flag, Item, Project, ScreeningStatus, Source, User
from datasets_build.models import NearDuplicate
from datasets_build.services import items_import
from tests.builders import nothing_written, write_jsonl

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "demo" / "corpus"


def run_command(*args: str) -> dict[str, Any]:
    from io import StringIO

    out = StringIO()
    call_command("import_items", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.django_db
def test_command_creates_the_project_and_imports_jsonl_with_its_labels():
    result = run_command("news", str(DEMO / "tc.jsonl"), "--format", "jsonl", "--task-type", "tc",
                         "--source", "goldset-demo", "--license", "cc-by-sa-4.0")
    assert result["project"] == "news" and result["task_type"] == "tc"
    assert result["created"] == {"items": 40, "annotations": 40}
    assert result["errors"] == []
    project = Project.objects.get(slug="news")
    item = Item.objects.get(project=project, external_id="goldset-demo-tc-0001")
    assert item.source.name == "goldset-demo" and item.source.license == "CC-BY-SA-4.0"
    assert item.payload["title"].startswith("국내 연구진")
    annotation = item.annotations.get()
    assert annotation.imported and annotation.payload["label"] == "IT과학"
    assert annotation.annotator.is_imported and not annotation.annotator.has_usable_password()
    assert not annotation.annotator.is_active


@pytest.mark.django_db
@pytest.mark.parametrize("task", ["tc", "nli", "ner", "re", "dp", "mrc"])
def test_every_demo_corpus_file_imports(task, make_project):
    project = make_project(task)
    result = items_import(project, DEMO / f"{task}.jsonl", "jsonl", pii="off")
    lines = sum(1 for line in (DEMO / f"{task}.jsonl").read_text(encoding="utf-8").splitlines() if line.strip())
    assert result.errors == []
    assert result.items == lines == Item.objects.filter(project=project).count()


@pytest.mark.django_db
def test_a_bad_record_imports_nothing_and_every_problem_is_reported(tmp_path, make_project):
    project = make_project("tc")
    path = write_jsonl(tmp_path / "bad.jsonl", [
        {"guid": "a-1", "title": "정상적인 기사 제목", "label": "사회"},
        '{"guid": "a-2", "title": "잘린 줄',
        {"guid": "a-3", "label": "사회"},
        {"guid": "a-4", "title": "라벨이 틀린 기사", "label": "연예"},
        ["not", "an", "object"],
    ])
    result = items_import(project, path, "jsonl")
    assert nothing_written(project)
    by_record = {e["record"]: e for e in result.errors}
    assert set(by_record) == {2, 3, 4, 5}
    assert "invalid JSON" in by_record[2]["message"]
    assert by_record[3]["field"] == "title" and "required" in by_record[3]["message"]
    assert by_record[4]["field"].startswith("annotations[0]") and "연예" in by_record[4]["message"]
    assert "JSON object" in by_record[5]["message"]
    assert not Source.objects.filter(name__contains="bad.jsonl").exists()
    assert not User.objects.filter(is_imported=True).exists()


@pytest.mark.django_db
def test_errors_stop_at_the_cap(tmp_path, make_project, settings):
    settings.GOLDSET_IMPORT_MAX_ERRORS = 5
    project = make_project("tc")
    path = write_jsonl(tmp_path / "many.jsonl", [{"guid": f"x-{i}"} for i in range(20)])
    result = items_import(project, path, "jsonl")
    assert len(result.errors) == 6 and "stopped after 5 errors" in result.errors[-1]["message"]
    assert nothing_written(project)


@pytest.mark.django_db
def test_command_exits_non_zero_with_a_one_line_reason(tmp_path, make_project):
    project = make_project("tc")
    path = write_jsonl(tmp_path / "bad.jsonl", [{"guid": "a-1"}])
    with pytest.raises(CommandError) as info:
        call_command("import_items", project.slug, str(path), "--format", "jsonl")
    assert "nothing imported" in str(info.value) and "title" in str(info.value)
    assert "\n" not in str(info.value)
    with pytest.raises(CommandError, match="pass --task-type"):
        call_command("import_items", "no-such-project", str(path), "--format", "jsonl")


@pytest.mark.django_db
def test_a_bad_dp_head_and_a_mismatched_ner_tag_sequence_import_nothing(tmp_path, make_project):
    dp = make_project("dp")
    record = json.loads((DEMO / "dp.jsonl").read_text(encoding="utf-8").splitlines()[0])
    bad = {**record, "guid": "dp-bad", "head": [5, 5, 5, 9, 0]}
    result = items_import(dp, write_jsonl(tmp_path / "dp.jsonl", [record, bad]), "jsonl")
    assert nothing_written(dp)
    assert result.errors[0]["record"] == 2 and result.errors[0]["field"].startswith("annotations[0].heads")

    ner = make_project("ner")
    chars = list("경찰은 입건했다")
    tags = ["B-OG", "I-OG", "O", "O", "O", "O", "O"]  # one tag short of the characters
    result = items_import(ner, write_jsonl(tmp_path / "ner.jsonl", [{"guid": "n-1", "chars": chars, "tags": tags}]),
                          "jsonl")
    assert nothing_written(ner)
    assert result.errors == [{"record": 1, "field": "tags", "message": "has 7 tags for 8 characters"}]


@pytest.mark.django_db
def test_exact_duplicates_are_skipped_with_a_report_or_refused(tmp_path, make_project):
    project = make_project("tc")
    path = write_jsonl(tmp_path / "dups.jsonl", [
        {"guid": "d-1", "title": "같은   제목의 기사"},
        {"guid": "d-2", "title": "같은 제목의 기사"},  # the same after whitespace normalisation
        {"guid": "d-3", "title": "다른 제목의 기사"},
    ])
    result = items_import(project, path, "jsonl")
    assert result.items == 2
    assert result.summary["duplicates_skipped"] == 1
    assert result.summary["duplicates"] == [{"record": 2, "duplicate_of": "record 1"}]

    again = items_import(project, path, "jsonl")  # a re-import adds nothing
    assert again.items == 0 and again.summary["duplicates_skipped"] == 3

    other = make_project("tc")
    refused = items_import(other, path, "jsonl", duplicates="refuse")
    assert nothing_written(other)
    assert refused.errors[0]["record"] == 2 and "exact duplicate of record 1" in refused.errors[0]["message"]


@pytest.mark.django_db
def test_re_items_on_one_sentence_with_other_entities_are_not_duplicates(make_project):
    project = make_project("re")
    result = items_import(project, DEMO / "re.jsonl", "jsonl", pii="off")
    assert result.summary["duplicates_skipped"] == 0 and result.items == 36


@pytest.mark.django_db
def test_near_duplicates_are_found_and_reported(tmp_path, make_project):
    project = make_project("tc")
    base = "서울시는 다음 달부터 심야버스 노선을 다섯 개 늘리고 배차 간격을 줄인다고 밝혔다"
    path = write_jsonl(tmp_path / "near.jsonl", [
        {"guid": "n-1", "title": base},
        {"guid": "n-2", "title": base + "!"},
        {"guid": "n-3", "title": "전혀 관계없는 스포츠 기사 제목입니다 야구 경기 결과"},
    ])
    result = items_import(project, path, "jsonl")
    assert result.items == 3 and result.summary["near_duplicates"] == 1
    first, second = NearDuplicate.objects.filter(project=project).order_by("item_id").select_related("item")
    assert (first.item.external_id, second.item.external_id) == ("n-1", "n-2")
    assert first.group == second.group == first.item_id
    assert second.duplicate_of_id == first.item_id and second.similarity >= 0.8
    assert first.duplicate_of_id is None and first.similarity is None


@pytest.mark.django_db
def test_raw_dp_sentences_get_kiwi_columns_with_sejong_tags(tmp_path, make_project):
    project = make_project("dp")
    sentence = "동생이 아침마다 공원에서 강아지를 산책시킨다."
    path = write_jsonl(tmp_path / "raw.jsonl", [{"guid": "raw-1", "sentence": sentence}])
    result = items_import(project, path, "jsonl")
    assert result.errors == [] and result.annotations == 0
    tokens = Item.objects.get(project=project).payload["tokens"]
    assert [t["form"] for t in tokens] == ["동생이", "아침마다", "공원에서", "강아지를", "산책시킨다."]
    assert tokens[0] == {"index": 1, "form": "동생이", "lemma": "동생 이", "pos": "NNG+JKS"}
    assert tokens[4]["lemma"] == "산책 시키 ㄴ다 ."  # compatibility jamo, as KLUE writes it
    assert tokens[4]["pos"] == "NNG+XSV+EF+SF"


@pytest.mark.django_db
def test_a_multi_word_name_does_not_lump_the_eojeol_it_spans(tmp_path, make_project):
    """Kiwi's multi-word dictionary makes "해리 포터와 마법사의 돌" one proper noun spanning four eojeol, which the
    eojeol columns cannot hold: the first eojeol got the whole name and the others none (their form as NA)."""
    project = make_project("dp")
    path = write_jsonl(tmp_path / "raw.jsonl", [{"guid": "raw-1", "sentence": "나는 해리 포터와 마법사의 돌을 읽었다"}])
    result = items_import(project, path, "jsonl")
    assert result.errors == []
    tokens = Item.objects.get(project=project).payload["tokens"]
    assert [(t["form"], t["lemma"], t["pos"]) for t in tokens] == [
        ("나는", "나 는", "NP+JX"), ("해리", "해리", "NNP"), ("포터와", "포터 와", "NNP+JC"),
        ("마법사의", "마법사 의", "NNG+JKG"), ("돌을", "돌 을", "NNG+JKO"), ("읽었다", "읽 었 다", "VV+EP+EF")]


@pytest.mark.django_db
def test_toxic_and_biased_items_need_review_and_get_flags(tmp_path, make_project):
    project = make_project("tc")
    path = write_jsonl(tmp_path / "tox.jsonl", [
        {"guid": "t-1", "title": "이 씨 발 놈들 다 필요 없다"},
        {"guid": "t-2", "title": "전라도 사람들은 다 믿으면 안 된다는 댓글 논란"},
        {"guid": "t-3", "title": "시 발표에 따르면 내년 예산이 늘어난다"},
    ])
    result = items_import(project, path, "jsonl")
    assert result.items == 3
    statuses = dict(Item.objects.filter(project=project).values_list("external_id", "screening_status"))
    assert statuses == {"t-1": ScreeningStatus.NEEDS_REVIEW, "t-2": ScreeningStatus.NEEDS_REVIEW,
                        "t-3": ScreeningStatus.CLEAR}
    assert Flag.objects.get(item__external_id="t-1").kind == "toxic"
    flag = Flag.objects.get(item__external_id="t-2")
    assert flag.kind == "bias" and flag.user is None and "region" in flag.note
    assert result.summary["screening"] == {"bias": {"region": 1}, "toxic": {"profanity": 1}}


@pytest.mark.django_db
def test_a_database_error_while_writing_reaches_the_caller_and_nothing_stays(tmp_path, make_project, monkeypatch):
    """An error in the writing of a batch (here: the second of four) is raised to the import's caller, whose
    transaction then rolls back everything, the batches written before it included."""
    from django.db import DatabaseError

    from datasets_build import batch_services, pipeline

    monkeypatch.setattr(pipeline, "BATCH_SIZE", 3)
    original, calls = batch_services.ITEM_ROWS.insert, {"items": 0}

    def failing_insert(rows, **kwargs):
        calls["items"] += 1
        if calls["items"] == 2:
            raise DatabaseError("the disk is full")
        return original(rows, **kwargs)

    monkeypatch.setattr(batch_services.ITEM_ROWS, "insert", failing_insert)
    project = make_project("tc")
    path = write_jsonl(tmp_path / "ten.jsonl", [{"guid": f"g-{i}", "title": f"서로 다른 기사 제목 번호 {i}"}
                                                for i in range(10)])
    with pytest.raises(DatabaseError, match="the disk is full"):
        items_import(project, path, "jsonl")
    assert nothing_written(project)
    assert calls["items"] == 2  # the batches after the failing one were not written


@pytest.mark.django_db
def test_rows_written_without_instances_equal_rows_bulk_created(make_project):
    """``bulk.insert_values`` (COPY of plain values, the fields' defaults filled in) writes what
    ``bulk_create`` of model instances writes, for the importer's annotations and flags."""
    from annotation import bulk

    project = make_project("tc")
    corpus = User.objects.create(username="corpus:a", is_imported=True)
    first, second = (Item.objects.create(project=project, payload={"title": t}, content_hash=t) for t in "ab")
    label = {"label": "사회", "note": [1.5, None, "큰 \"따옴표\"\t탭"]}

    def rows(item: Item) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return ([{"item_id": item.pk, "annotator_id": corpus.pk, "stage": "label", "payload": label, "imported": True}],
                [{"item_id": item.pk, "user_id": None, "kind": "pii", "note": "PII detected: phone ×1"}])

    annotations, flags = rows(first)
    assert bulk.insert_values(Annotation, annotations) == 1 and bulk.insert_values(Flag, flags) == 1
    annotations, flags = rows(second)
    Annotation.objects.bulk_create([Annotation(**row) for row in annotations])
    Flag.objects.bulk_create([Flag(**row) for row in flags])
    skip = {"id", "item", "created_at", "updated_at"}
    for model in (Annotation, Flag):
        written = [{f.attname: getattr(row, f.attname) for f in model._meta.concrete_fields if f.name not in skip}
                   for row in model.objects.filter(item__project=project).order_by("item_id")]
        assert len(written) == 2 and written[0] == written[1]


@pytest.mark.django_db
def test_rows_encoded_for_copy_equal_rows_bulk_created(make_project):
    """``bulk.EncodedRows`` (COPY text encoded beforehand, ids and foreign keys added by the writer) writes
    what ``bulk_create`` writes — tabs, newlines, backslashes, quotes, NULL, choices and JSON included."""
    from annotation import bulk

    project = make_project("tc")
    corpus = User.objects.create(username="corpus:b", is_imported=True)
    odd = "탭\t줄\n바꿈\r\\역슬래시 \"따옴표\" \\N 😀"
    item = {"project_id": project.pk, "source_id": None, "payload": {"title": odd, "n": [1.5, None, True]},
            "external_id": f"e-{odd}", "meta": {"url": odd, "nested": {"k": "\\t"}}, "content_hash": "h" * 64,
            "group_key": "", "split": "", "pii_findings": [{"type": "phone", "action": "pseudonymized"}],
            "screening_status": ScreeningStatus.NEEDS_REVIEW}
    items = bulk.EncodedRows(Item)
    (copied,) = items.insert([((), items.encode(item))], ids=True)
    (created,) = Item.objects.bulk_create([Item(**{**item, "external_id": "other"})])
    labels = bulk.EncodedRows(Annotation, writer_fields=("item", "annotator"))
    label = {"stage": "label", "payload": {"label": odd}, "imported": True}
    labels.insert([((copied, corpus.pk), labels.encode(label))])
    Annotation.objects.bulk_create([Annotation(item_id=created.pk, annotator_id=corpus.pk, **label)])
    skip = {"id", "item", "external_id", "created_at", "updated_at"}
    for rows in (Item.objects.filter(pk__in=[copied, created.pk]),
                 Annotation.objects.filter(item_id__in=[copied, created.pk])):
        written = [{f.attname: getattr(row, f.attname) for f in rows.model._meta.concrete_fields
                    if f.name not in skip} for row in rows]
        assert len(written) == 2 and written[0] == written[1]
    assert Item.objects.get(pk=copied).external_id == f"e-{odd}"
    assert Item.objects.get(pk=copied).created_at is not None
