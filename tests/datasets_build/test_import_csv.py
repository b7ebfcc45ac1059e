"""CSV import (flattened columns, JSON lists) and the encodings Korean files come in."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from annotation.models import Item
from datasets_build.services import items_import


def write_csv(path: Path, header: list[str], rows: list[list[str]], encoding: str = "utf-8") -> Path:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    path.write_bytes(out.getvalue().encode(encoding))
    return path


RE_HEADER = ["guid", "sentence", "subject_entity.word", "subject_entity.start_idx", "subject_entity.end_idx",
             "subject_entity.type", "object_entity.word", "object_entity.start_idx", "object_entity.end_idx",
             "object_entity.type", "label", "source"]
RE_ROW = ["re-1", "가상전자는 1998년 경기도 성남시에서 설립된 전자부품 제조 기업이다.", "가상전자", "0", "3", "ORG",
          "1998년", "6", "10", "DAT", "org:founded", "wikipedia"]


@pytest.mark.django_db
def test_nested_columns_are_unflattened(tmp_path, make_project):
    project = make_project("re")
    result = items_import(project, write_csv(tmp_path / "re.csv", RE_HEADER, [RE_ROW]), "csv")
    assert result.errors == []
    item = Item.objects.get(project=project)
    assert item.payload["subject_entity"] == {"word": "가상전자", "start_idx": 0, "end_idx": 3, "type": "ORG"}
    assert item.annotations.get().payload == {"label": "org:founded"}


@pytest.mark.django_db
def test_lists_are_json_strings(tmp_path, make_project):
    project = make_project("sts")
    header = ["guid", "source", "sentence1", "sentence2", "annotations.annotators", "annotations.annotations"]
    row = ["s-1", "airbnb-rtt", "숙소가 역에서 가까웠어요.", "숙소가 역과 가까웠습니다.", '["17", "07", "10"]',
           "[5, 4, 5]"]
    result = items_import(project, write_csv(tmp_path / "sts.csv", header, [row]), "csv")
    assert result.errors == []
    scores = sorted(a.payload["score"] for a in Item.objects.get(project=project).annotations.all())
    assert scores == [4, 5, 5]


@pytest.mark.django_db
def test_a_missing_required_column_imports_nothing(tmp_path, make_project):
    project = make_project("sts")
    path = write_csv(tmp_path / "sts.csv", ["guid", "sentence1"], [["s-1", "문장 하나"]])
    result = items_import(project, path, "csv")
    assert not Item.objects.filter(project=project).exists()
    assert result.errors == [{"record": 1, "field": "sentence2",
                              "message": "missing required column 'sentence2' (header has: guid, sentence1)"}]


@pytest.mark.django_db
def test_a_row_with_extra_cells_and_bad_json_are_reported_by_line(tmp_path, make_project):
    project = make_project("re")
    path = tmp_path / "re.csv"
    path.write_text(",".join(RE_HEADER) + "\n" + ",".join(RE_ROW) + ",extra\n", encoding="utf-8")
    result = items_import(project, path, "csv")
    assert result.errors[0]["record"] == 2 and "13 cells" in result.errors[0]["message"]
    sts = make_project("sts")
    header = ["guid", "sentence1", "sentence2", "annotations.annotations"]
    result = items_import(sts, write_csv(tmp_path / "sts.csv", header, [["s", "가", "나", "[5, 4"]]), "csv")
    assert result.errors[0]["field"] == "annotations.annotations" and "JSON" in result.errors[0]["message"]
    assert not Item.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp949", "euc-kr"])
def test_utf8_bom_and_korean_legacy_encodings_are_detected(tmp_path, make_project, encoding):
    project = make_project("re")
    result = items_import(project, write_csv(tmp_path / "re.csv", RE_HEADER, [RE_ROW], encoding), "csv")
    assert result.errors == []
    assert Item.objects.get(project=project).payload["sentence"] == RE_ROW[1]


@pytest.mark.django_db
def test_jsonl_in_cp949_is_detected_too(tmp_path, make_project):
    project = make_project("tc")
    path = tmp_path / "tc.jsonl"
    path.write_bytes((json.dumps({"guid": "c-1", "title": "한국어 기사 제목입니다"}, ensure_ascii=False) + "\n")
                     .encode("cp949"))
    assert items_import(project, path, "jsonl").items == 1


@pytest.mark.django_db
def test_a_cp949_file_labelled_utf8_is_refused_naming_the_encoding(tmp_path, make_project):
    project = make_project("re")
    path = write_csv(tmp_path / "re.csv", RE_HEADER, [RE_ROW], "cp949")
    result = items_import(project, path, "csv", encoding="utf-8")
    assert not Item.objects.filter(project=project).exists()
    [error] = result.errors
    assert error["field"] == "encoding" and error["record"] == 2
    assert "not valid UTF-8" in error["message"] and "CP949" in error["message"]


@pytest.mark.django_db
def test_an_undecodable_file_is_refused(tmp_path, make_project):
    project = make_project("tc")
    path = tmp_path / "junk.jsonl"
    path.write_bytes(b'{"title": "\xff\xfe\xfa\xfb\xfc"}\n' * 3)
    result = items_import(project, path, "jsonl")
    assert result.errors[0]["field"] == "encoding" and "re-save it as UTF-8" in result.errors[0]["message"]
