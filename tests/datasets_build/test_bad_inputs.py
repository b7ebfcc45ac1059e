"""The bad-input catalogue: every malformed file in tests/data/bad/ gets the exact error a user should see.

``tests/data/bad/EXPECTED.json`` maps each file to its task, format, the record and field the error names
and the message fragment; files that look odd but are fine (a BOM, CP949) are listed as accepted. Each
goes through ``import_items --json`` and a rejected file leaves nothing behind. The 10 MB single-line file
is generated here rather than committed.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Annotation, Item, User

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
EXPECTED: dict[str, dict[str, Any]] = json.loads((BAD / "EXPECTED.json").read_text(encoding="utf-8"))


def test_every_file_in_the_catalogue_has_an_expectation() -> None:
    files = {path.name for path in BAD.iterdir() if path.name != "EXPECTED.json"}
    assert files == set(EXPECTED["rejected"]) | set(EXPECTED["accepted"])


def import_file(make_project, name: str, path: Path, task: str, fmt: str) -> tuple[Any, str]:
    project = make_project(task, slug=f"bad-{name.split('.')[0].replace('_', '-')}")
    users = User.objects.count()
    out = StringIO()
    try:
        call_command("import_items", project.slug, str(path), "--format", fmt, "--json", stdout=out)
    except CommandError as error:
        assert not Item.objects.filter(project=project).exists(), "a refused file must write no item"
        assert not Annotation.objects.filter(item__project=project).exists()
        assert User.objects.count() == users, "a refused file must create no imported annotator"
        return project, str(error)
    return project, out.getvalue()


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(EXPECTED["rejected"]))
def test_bad_file_is_refused_with_its_message(name: str, make_project) -> None:
    expected = EXPECTED["rejected"][name]
    _, message = import_file(make_project, name, BAD / name, expected["task"], expected["format"])
    assert message.startswith("nothing imported:"), message
    where = f"first at record {expected['record']}" + (f" {expected['field']}:" if expected["field"] else ":")
    assert where in message, message
    assert expected["message"] in message, message


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(EXPECTED["accepted"]))
def test_odd_but_valid_file_is_imported(name: str, make_project) -> None:
    expected = EXPECTED["accepted"][name]
    project, output = import_file(make_project, name, BAD / name, expected["task"], expected["format"])
    result = json.loads(output)
    assert result["errors"] == [] and result["created"]["items"] == expected["items"]
    assert all(not item.payload["title"].startswith("\ufeff") for item in Item.objects.filter(project=project))


@pytest.mark.django_db
def test_ten_megabyte_single_line_is_refused_or_imported_whole(make_project, tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    title = "가" * (10 * 1024 * 1024 // 3)
    path.write_text(json.dumps({"guid": "huge-1", "title": title, "label": "사회"}, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    assert path.stat().st_size >= 10 * 1024 * 1024 - 100
    project, output = import_file(make_project, "huge.jsonl", path, "tc", "jsonl")
    if output.startswith("nothing imported:"):
        assert "record 1" in output
    else:
        # Accepted: it must be stored whole, never truncated.
        assert json.loads(output)["created"]["items"] == 1
        assert len(Item.objects.get(project=project).payload["title"]) == len(title)
