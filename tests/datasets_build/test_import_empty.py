"""A file with no records is refused, naming the reason, and changes nothing: through the import API (the job
fails with the reason, no source or item is created) and the command (non-zero exit; a project it created for
the file is not left behind). A file of no bytes at all is refused by the upload itself."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.models import Item, Project, Source
from datasets_build.models import ImportStatus

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media")]

EMPTY_FILES = {
    "blank-jsonl": ("blank.jsonl", b"\n  \n\n"),
    "csv-header-only": ("header.csv", b"title,label\n"),
    "klue-no-records": ("ynat.json", b"[]"),
}


@pytest.mark.parametrize("case", list(EMPTY_FILES))
def test_an_empty_file_fails_its_job_with_the_reason(api, make_project, django_capture_on_commit_callbacks, case):
    project = make_project("tc")
    name, content = EMPTY_FILES[case]
    fmt = {"csv": "csv", "json": "klue"}.get(name.rpartition(".")[2], "jsonl")
    client = api(project.created_by)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/projects/{project.pk}/imports/",
                               {"file": SimpleUploadedFile(name, content), "format": fmt})
    assert response.status_code == 202, response.data
    job = client.get(f"/api/projects/{project.pk}/imports/{response.data['id']}/").data
    assert job["status"] == ImportStatus.FAILED
    assert [(e["record"], e["field"]) for e in job["errors"]] == [(0, "file")]
    assert job["errors"][0]["message"] == "the file holds no records: nothing was imported"
    assert not Item.objects.filter(project=project).exists()
    assert not Source.objects.filter(project=project).exists()


def test_the_command_refuses_an_empty_file_and_leaves_no_project(tmp_path, capsys):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"\n")
    with pytest.raises(CommandError, match="no records"):
        call_command("import_items", "brand-new", str(path), "--format", "jsonl", "--task-type", "tc", "--json")
    assert not Project.objects.filter(slug="brand-new").exists()
    out = json.loads(capsys.readouterr().out)
    assert out["created"] == {"items": 0, "annotations": 0} and out["errors"][0]["field"] == "file"


def test_the_import_page_gives_the_refusal_in_the_readers_language(make_project, django_capture_on_commit_callbacks):
    project = make_project("tc")
    page = {}
    for language, expected in (("ko", "파일에 레코드가 없습니다. 아무것도 가져오지 않았습니다"),
                               ("en", "the file holds no records: nothing was imported")):
        client = Client(HTTP_ACCEPT_LANGUAGE=language)
        client.force_login(project.created_by)
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(f"/projects/{project.pk}/import/", {
                "file": SimpleUploadedFile("blank.jsonl", b"\n\n"), "format": "jsonl", "source": "", "license": "",
                "pii": "", "encoding": "auto", "duplicates": "skip"})
        assert response.status_code == 302
        page[language] = client.get(response.url).content.decode()
        assert expected in page[language]
    assert "the file holds no records" not in page["ko"]
