"""Importing doccano and Label Studio exports (real ones: tests/data/interop/README.md says how they were
made): each author's labels become their own imported annotation, through the same pipeline (PII with
offsets remapped, all or nothing, errors naming the file, record and field)."""

from __future__ import annotations

import json
import zipfile
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.agreement.services import report_now
from annotation.models import Annotation, Item, Project
from datasets_build.batch_services import imported_username

pytestmark = pytest.mark.django_db

DATA = Path(__file__).parents[1] / "data" / "interop"


def _import(slug: str, path: Path, fmt: str, task: str, *extra: str) -> dict[str, Any]:
    out = StringIO()
    call_command("import_items", slug, str(path), "--format", fmt, "--task-type", task, "--source", f"{slug}-src",
                 "--json", *extra, stdout=out)
    return json.loads(out.getvalue())


def _labels(slug: str) -> dict[tuple[str, str], dict[str, Any]]:
    """(item text, annotator) → payload of every imported annotation of the project."""
    # Imported raters are stored under a keyed hash of their id (never raw): map the fixtures' authors back.
    project = Project.objects.get(slug=slug)
    authors = {imported_username(project, who): who
               for who in ("kim", "lee", "park", "admin", *(f"user{i}" for i in range(1, 10)))}
    found = {}
    for a in Annotation.objects.filter(item__project__slug=slug).select_related("item", "annotator"):
        item = a.item.payload
        text = item.get("title") or item.get("sentence")
        if "subject_entity" in item:
            text = f"{text}|{item['subject_entity']['word']}|{item['object_entity']['word']}"
        assert a.imported and a.annotator.is_imported
        found[(text, authors.get(a.annotator.username, "corpus"))] = a.payload
    return found


def test_doccano_text_classification_zip_keeps_each_annotator():
    result = _import("dc-tc", DATA / "doccano_tc.zip", "doccano", "tc")
    # Four examples; kim and lee labelled all four, park three, admin none (an empty label is no annotation).
    assert result["created"] == {"items": 4, "annotations": 11}
    labels = _labels("dc-tc")
    assert labels[("코스피 2,500선 회복…외국인 순매수", "park")] == {"label": "사회", "second": None, "third": None}
    assert labels[("삼성전자 차세대 반도체 공정 공개", "lee")]["label"] == "경제"
    assert ("삼성전자 차세대 반도체 공정 공개", "park") not in labels
    assert {who for _, who in labels} == {"kim", "lee", "park"}
    assert {i.external_id for i in Item.objects.filter(project__slug="dc-tc")} == {"1", "2", "3", "4"}
    report = report_now(Project.objects.get(slug="dc-tc"))
    assert report["annotators"] == 3 and report["items_counted"] == 4


def test_doccano_sequence_labelling_zip_gives_entities_per_annotator():
    result = _import("dc-ner", DATA / "doccano_ner.zip", "doccano", "ner")
    assert result["created"] == {"items": 3, "annotations": 8}
    labels = _labels("dc-ner")
    text = "김연아는 밴쿠버 올림픽에서 금메달을 땄다."
    assert labels[(text, "lee")]["entities"] == [{"start": 0, "end": 3, "type": "PS"},
                                                 {"start": 5, "end": 12, "type": "OG"}]
    assert labels[(text, "kim")]["entities"][1] == {"start": 5, "end": 8, "type": "LC"}
    assert (text, "park") not in labels
    assert report_now(Project.objects.get(slug="dc-ner"))["annotators"] == 3


def test_doccano_relation_zip_gives_one_item_per_related_pair():
    result = _import("dc-re", DATA / "doccano_re.zip", "doccano", "re")
    assert result["created"] == {"items": 3, "annotations": 7}
    labels = _labels("dc-re")
    pair = "이병철은 1938년 삼성상회를 대구에 세웠다.|삼성상회|대구"
    assert labels[(pair, "kim")] == {"label": "org:place_of_headquarters"}
    assert labels[(pair, "lee")] == {"label": "no_relation"}
    item = Item.objects.get(project__slug="dc-re", payload__object_entity__word="이병철")
    assert item.payload["subject_entity"] == {"word": "삼성상회", "start_idx": 11, "end_idx": 14, "type": "ORG"}
    assert Annotation.objects.filter(item=item).count() == 3


def _zip_with(original: Path, member: str, change: Any, tmp_path: Path) -> Path:
    """A copy of a doccano ZIP whose ``member`` has its lines passed through ``change``."""
    path = tmp_path / original.name
    with zipfile.ZipFile(original) as source, zipfile.ZipFile(path, "w") as target:
        for name in source.namelist():
            lines = source.read(name).decode("utf-8").splitlines()
            if name == member:
                lines = [json.dumps(change(json.loads(line)), ensure_ascii=False) for line in lines]
            target.writestr(name, "\n".join(lines) + "\n")
    return path


def test_pii_before_a_span_is_pseudonymized_and_the_span_moves_with_it(tmp_path):
    prefix = "문의 010-2345-6789 "

    def with_phone(line: dict[str, Any]) -> dict[str, Any]:
        return {**line, "text": prefix + line["text"],
                "label": [[s + len(prefix), e + len(prefix), t] for s, e, t in line["label"]]}

    path = _zip_with(DATA / "doccano_ner.zip", "kim.jsonl", with_phone, tmp_path)
    # kim's texts now differ from the other annotators' copies of the same examples: refused, naming them.
    with pytest.raises(CommandError):
        _import("dc-pii-bad", path, "doccano", "ner", "--pii", "pseudonymize")
    single = tmp_path / "kim.jsonl"
    with zipfile.ZipFile(path) as archive:
        single.write_bytes(archive.read("kim.jsonl"))
    result = _import("dc-pii", single, "doccano", "ner", "--pii", "pseudonymize")
    assert result["created"] == {"items": 3, "annotations": 3}
    assert result["summary"]["pii"]["phone"] == {"pseudonymized": 3}
    for annotation in Annotation.objects.filter(item__project__slug="dc-pii"):
        sentence = annotation.item.payload["sentence"]
        assert "010-2345-6789" not in sentence
        words = [sentence[e["start"]:e["end"]] for e in annotation.payload["entities"]]
        assert words[0] in {"이순신", "삼성전자", "김연아"}, (sentence, words)
        assert annotation.annotator.username == "dc-pii-src:corpus"  # a single file names no annotator


def test_doccano_errors_name_the_file_the_line_and_the_field_and_nothing_is_imported(tmp_path):
    def broken(line: dict[str, Any]) -> dict[str, Any]:
        if line["id"] == 6:
            return {**line, "label": [[0, 99, "OG"], [6, "8", "LC"]]}
        return line

    path = _zip_with(DATA / "doccano_ner.zip", "lee.jsonl", broken, tmp_path)
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("import_items", "dc-err", str(path), "--format", "doccano", "--task-type", "ner", "--json",
                     stdout=out)
    errors = json.loads(out.getvalue())["errors"]
    assert errors[0] == {"record": 2, "field": "lee.jsonl:label[0].end",
                         "message": "span [0, 99) is not inside the text (20 characters)"}
    assert not Item.objects.filter(project__slug="dc-err").exists()


def test_doccano_entity_type_outside_the_schema_names_the_annotator(tmp_path):
    def unknown(line: dict[str, Any]) -> dict[str, Any]:
        return {**line, "label": [[s, e, "PERSON" if t == "PS" else t] for s, e, t in line["label"]]}

    path = _zip_with(DATA / "doccano_ner.zip", "park.jsonl", unknown, tmp_path)
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("import_items", "dc-err2", str(path), "--format", "doccano", "--task-type", "ner", "--json",
                     stdout=out)
    error = json.loads(out.getvalue())["errors"][0]
    assert error["field"].startswith("annotations[") and "annotator park" in error["message"]


def test_an_export_for_another_task_type_is_refused():
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("import_items", "dc-dp", str(DATA / "doccano_ner.zip"), "--format", "doccano", "--task-type",
                     "dp", "--json", stdout=out)
    assert json.loads(out.getvalue())["errors"][0]["message"].startswith(
        "doccano exports import into tc, ner and re projects")


def test_the_api_takes_a_doccano_zip(make_project, api, django_capture_on_commit_callbacks):
    project = make_project("ner")
    with django_capture_on_commit_callbacks(execute=True):
        response = api(project.created_by).post(
            f"/api/projects/{project.pk}/imports/",
            {"file": SimpleUploadedFile("ner-export.zip", (DATA / "doccano_ner.zip").read_bytes()),
             "format": "doccano"}, format="multipart")
    assert response.status_code == 202, response.content
    job = api(project.created_by).get(f"/api/projects/{project.pk}/imports/{response.json()['id']}/").json()
    assert job["status"] == "succeeded", job
    assert job["annotations_written"] == 8


def test_labelstudio_choices_give_tc_annotations_per_user_and_skip_cancelled_ones():
    result = _import("ls-tc", DATA / "labelstudio_tc.json", "labelstudio", "tc")
    assert result["created"] == {"items": 3, "annotations": 8}
    labels = _labels("ls-tc")
    assert labels[("코스피 2,500선 회복…외국인 순매수", "user3")] == {"label": "사회", "second": None, "third": None}
    assert ("손흥민 시즌 10호 골…토트넘 3연승", "user4") not in labels  # park skipped it
    assert report_now(Project.objects.get(slug="ls-tc"))["annotators"] == 3


def test_labelstudio_labels_give_ner_annotations_with_character_offsets():
    result = _import("ls-ner", DATA / "labelstudio_ner.json", "labelstudio", "ner")
    # park submitted the second task without entities: an annotation that says "none".
    assert result["created"] == {"items": 2, "annotations": 6}
    labels = _labels("ls-ner")
    assert labels[("김연아는 밴쿠버 올림픽에서 금메달을 땄다.", "user4")] == {"entities": []}
    assert labels[("이순신은 1545년 한성에서 태어났다.", "user2")]["entities"] == [
        {"start": 0, "end": 3, "type": "PS"}, {"start": 5, "end": 10, "type": "DT"},
        {"start": 11, "end": 13, "type": "LC"}]


def test_labelstudio_relations_give_re_items():
    result = _import("ls-re", DATA / "labelstudio_re.json", "labelstudio", "re")
    assert result["created"] == {"items": 3, "annotations": 8}
    labels = _labels("ls-re")
    assert labels[("이병철은 1938년 삼성상회를 대구에 세웠다.|삼성상회|대구", "user3")] == {"label": "no_relation"}
    pair = "손흥민은 토트넘 홋스퍼에서 뛰고 있다.|손흥민|토트넘 홋스퍼"
    assert labels[(pair, "user4")] == {"label": "per:employee_of"}


def test_labelstudio_errors_name_the_task_and_the_result_path(tmp_path):
    tasks = json.loads((DATA / "labelstudio_re.json").read_text("utf-8"))
    tasks[1]["annotations"][0]["result"][2]["to_id"] = "nowhere"
    tasks[0]["annotations"][1]["result"].append({"type": "textarea", "value": {"text": ["메모"]}})
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("import_items", "ls-err", str(path), "--format", "labelstudio", "--task-type", "re", "--json",
                     stdout=out)
    errors = json.loads(out.getvalue())["errors"]
    assert errors == [
        {"record": 1, "field": "annotations[1].result[5].type",
         "message": "'textarea' results are not imported into a re project (it takes labels, relation)"},
        {"record": 2, "field": "annotations[0].result[2].to_id",
         "message": "names no entity of this annotation ('nowhere')"}]
    assert not Item.objects.filter(project__slug="ls-err").exists()


def test_labelstudio_entities_nobody_related_are_refused_not_left_out(tmp_path):
    tasks = json.loads((DATA / "labelstudio_re.json").read_text("utf-8"))
    for annotation in tasks[1]["annotations"]:
        annotation["result"] = [r for r in annotation["result"] if r["type"] != "relation"]
    path = tmp_path / "unrelated.json"
    path.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("import_items", "ls-unrelated", str(path), "--format", "labelstudio", "--task-type", "re",
                     "--json", stdout=out)
    errors = json.loads(out.getvalue())["errors"]
    assert [(e["record"], e["field"]) for e in errors] == [(2, "relations")]
    assert "entities without a relation" in errors[0]["message"]
    assert not Item.objects.filter(project__slug="ls-unrelated").exists()


def test_a_collaborative_doccano_export_gives_the_corpus_labels(tmp_path):
    path = tmp_path / "collaborative.zip"
    with zipfile.ZipFile(DATA / "doccano_tc.zip") as source, zipfile.ZipFile(path, "w") as target:
        target.writestr("all.jsonl", source.read("kim.jsonl"))  # doccano's name for the merged labels
    assert _import("dc-all", path, "doccano", "tc")["created"] == {"items": 4, "annotations": 4}
    assert {who for _, who in _labels("dc-all")} == {"corpus"}


def test_a_labelstudio_relation_drawn_leftwards_goes_from_its_target(tmp_path):
    tasks = json.loads((DATA / "labelstudio_re.json").read_text("utf-8"))[1:]
    for annotation in tasks[0]["annotations"]:
        relation = annotation["result"][2]
        relation.update(from_id=relation["to_id"], to_id=relation["from_id"], direction="left")
    path = tmp_path / "left.json"
    path.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    assert _import("ls-left", path, "labelstudio", "re")["created"] == {"items": 1, "annotations": 3}
    item = Item.objects.get(project__slug="ls-left")
    words = (item.payload["subject_entity"]["word"], item.payload["object_entity"]["word"])
    assert words == ("손흥민", "토트넘 홋스퍼")


def test_the_import_page_takes_a_labelstudio_export(client, make_project, django_capture_on_commit_callbacks):
    project = make_project("ner")
    client.force_login(project.created_by)
    page = client.get(f"/projects/{project.pk}/import/").content.decode()
    assert 'value="labelstudio"' in page and 'value="doccano"' in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/projects/{project.pk}/import/", {
            "file": SimpleUploadedFile("project-2.json", (DATA / "labelstudio_ner.json").read_bytes()),
            "format": "labelstudio", "source": "", "license": "", "pii": "", "encoding": "auto",
            "duplicates": "skip"})
    assert response.status_code == 302
    body = client.get(response.url).content.decode()
    assert "Imported" in body
    assert Annotation.objects.filter(item__project=project).count() == 6
