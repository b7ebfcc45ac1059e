"""Every way an import can fail ends its job as ``failed`` with a message naming the record and the problem, and
deletes the upload (issue 23, findings 3 and 4): NUL characters in keys and values, a CSV cell over the csv
module's field limit, JSON nested too deeply (JSONL, KLUE file, CSV cell), a record over the size limit, an error
nothing foresaw, a preparation process killed in the middle. A redelivered message for a finished job does nothing.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import resource
import signal
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Flag, Item, Source
from datasets_build import pipeline, prepare, processes, services
from datasets_build.models import ImportJob, ImportStatus, MinHashBand, NearDuplicate
from datasets_build.tasks import run_import
from tests.builders import jsonl

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media")]


@pytest.fixture
def run(api, make_project, django_capture_on_commit_callbacks):
    """Upload a file through the import API (the job runs when the request commits) → the finished job."""
    project = make_project("tc")
    client = api(project.created_by)

    def upload(name: str, content: bytes, fmt: str) -> ImportJob:
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(f"/api/projects/{project.pk}/imports/", {
                "file": SimpleUploadedFile(name, content), "format": fmt}, format="multipart")
        assert response.status_code == 202, response.data
        detail = client.get(f"/api/projects/{project.pk}/imports/{response.data['id']}/").data
        assert detail["status"] in (ImportStatus.SUCCEEDED, ImportStatus.FAILED), detail
        return ImportJob.objects.get(pk=response.data["id"])

    return upload


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


GOOD = {"guid": "ynat-v1_dev_00001", "title": "정부, 반도체 수출 규제 대응책 발표"}


def assert_failed(job: ImportJob, media: Path, record: int, *words: str) -> None:
    assert job.status == ImportStatus.FAILED, (job.status, job.message)
    assert not Item.objects.filter(project=job.project).exists()
    assert list((media / "imports").iterdir()) == [], "the upload was kept"
    first = job.errors[0]
    assert first["record"] == record, job.errors
    text = f"{first['field']} {first['message']}"
    assert all(word in text for word in words), (words, job.errors)
    assert job.message.startswith("nothing imported") and job.finished_at is not None


def test_nul_in_a_json_key(run, media):
    job = run("nul.jsonl", jsonl(GOOD, {"guid": "x-2", "title": "제목", "me\x00mo": "값"}), "jsonl")
    assert_failed(job, media, 2, "me\\x00mo", "NUL")


def test_nul_in_a_json_value(run, media):
    job = run("nul.jsonl", jsonl(GOOD, {"guid": "x-2", "title": "제\x00목"}), "jsonl")
    assert_failed(job, media, 2, "title", "NUL")


def test_nul_in_a_klue_file_key(run, media):
    records = [GOOD, {"guid": "ynat-v1_dev_00002", "title": "제목", "la\x00bel": "사회"}]
    job = run("ynat.json", json.dumps(records, indent=1).encode(), "klue")
    assert_failed(job, media, 6, "la\\x00bel", "NUL")


def test_a_csv_cell_over_the_csv_modules_field_limit(run, media):
    content = f"guid,title\nx-1,짧은 제목\nx-2,{'가' * 140_000}\n".encode()
    job = run("long.csv", content, "csv")
    assert_failed(job, media, 3, "field larger than field limit")


def test_deeply_nested_json_in_a_jsonl_line(run, media):
    job = run("deep.jsonl", jsonl(GOOD) + b'{"title": "t", "extra": ' + nested(200).encode() + b"}\n", "jsonl")
    assert_failed(job, media, 2, "nests more than 32 levels")


def test_deeply_nested_json_beyond_pythons_recursion_limit_in_a_klue_file(run, media):
    content = ('[{"guid": "ynat-v1_dev_00001", "title": "t"},\n{"title": "t", "extra": ' + nested(100_000)
               + "}]").encode()
    job = run("deep.json", content, "klue")
    assert_failed(job, media, 2, "nests too deeply")


def test_deeply_nested_json_in_a_csv_cell(run, media):
    content = f"title,extra\n짧은 제목,{nested(5_000)}\n".encode()
    job = run("deep.csv", content, "csv")
    assert_failed(job, media, 2, "extra", "nests more than")


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "klue"])
def test_a_record_over_the_size_limit(run, media, settings, fmt):
    settings.GOLDSET_IMPORT_MAX_RECORD_KB = 64
    title = "가" * (70 * 1024)
    if fmt == "jsonl":
        name, content, record = "big.jsonl", jsonl(GOOD, {"title": title}, GOOD), 2
    elif fmt == "csv":
        # A quoted cell spanning lines, each under the limit.
        name, content, record = "big.csv", ("title\n정상 제목\n\"" + (title[:1000] + "\n") * 70 + "\"\n").encode(), 3
    else:
        name, content, record = "big.json", json.dumps([GOOD, {"title": title}], indent=1).encode(), 6
    job = run(name, content, fmt)
    assert_failed(job, media, record, "larger than the limit of 65,536 characters")


def test_a_tsv_sentence_over_the_size_limit(api, make_project, media, settings, django_capture_on_commit_callbacks):
    settings.GOLDSET_IMPORT_MAX_RECORD_KB = 1
    project = make_project("ner")
    rows = "".join(f"{c}\tO\n" for c in "가" * 600)
    content = f"## klue-ner-v1_dev_00000-wikitree\t{'가' * 600}\n{rows}\n".encode()
    with django_capture_on_commit_callbacks(execute=True):
        response = api(project.created_by).post(f"/api/projects/{project.pk}/imports/", {
            "file": SimpleUploadedFile("ner.tsv", content), "format": "klue"}, format="multipart")
    assert_failed(ImportJob.objects.get(pk=response.data["id"]), media, 1, "larger than the limit of 1,024")


def test_an_unforeseen_error_preparing_a_record_names_it(run, media, monkeypatch):
    real = prepare.RecordPreparer.prepare

    def broken(self, record_no: int, record: dict[str, Any], **options: Any):
        if record.get("title") == "고장":
            raise ZeroDivisionError("division by zero")
        return real(self, record_no, record, **options)

    monkeypatch.setattr(prepare.RecordPreparer, "prepare", broken)
    job = run("t.jsonl", jsonl(GOOD, {"title": "고장"}), "jsonl")
    assert_failed(job, media, 2, "could not be prepared", "ZeroDivisionError")


def test_an_unforeseen_error_in_the_job_fails_it(run, media, monkeypatch):
    def broken(self, *batch):
        raise KeyError("an unforeseen bug")

    monkeypatch.setattr(pipeline.ImportPipeline, "_write", broken)
    job = run("t.jsonl", jsonl(GOOD), "jsonl")
    assert_failed(job, media, 0, "stopped after 1 record(s)", "KeyError", "an unforeseen bug")
    # A redelivered message for the failed job does nothing: the job stays as it ended, the file is not read.
    monkeypatch.undo()
    finished = job.finished_at
    assert run_import.apply(args=[job.pk]).get()["status"] == ImportStatus.FAILED
    job.refresh_from_db()
    assert job.finished_at == finished and not Item.objects.filter(project=job.project).exists()


def test_a_redelivered_message_for_a_finished_job_does_nothing(run, media):
    job = run("t.jsonl", jsonl(GOOD), "jsonl")
    assert job.status == ImportStatus.SUCCEEDED
    # The upload is gone; a second run must neither import again nor fail for the missing file.
    assert run_import.apply(args=[job.pk]).get() == {"job": job.pk, "status": ImportStatus.SUCCEEDED, "items": 1}
    job.refresh_from_db()
    assert job.status == ImportStatus.SUCCEEDED and Item.objects.filter(project=job.project).count() == 1


_prepare_in_worker = processes._prepare_in_worker


def _prepare_or_die(entries):
    """A preparation worker killed (as by the kernel's OOM killer) while it holds the record titled 죽는 제목."""
    if any(not isinstance(e, prepare.Failed) and e[1].get("title") == "죽는 제목" for e in entries):
        os.kill(os.getpid(), signal.SIGKILL)
    return _prepare_in_worker(entries)


_screen_with_models = processes._screen_with_models


def _screen_or_die(texts):
    """The model screeners' process killed while it screens the text 죽여 버리겠다."""
    if any("죽여 버리겠다" in text for text in texts):
        os.kill(os.getpid(), signal.SIGKILL)
    return _screen_with_models(texts)


@pytest.mark.parametrize(("patched", "killer", "deadly", "harmless", "which"), [
    ("_prepare_in_worker", _prepare_or_die, "죽는 제목", "제목 700번", "a preparation process stopped"),
    ("_screen_with_models", _screen_or_die, "다 죽여 버리겠다", "죽을 만큼 힘들다",  # the latter screened too
     "the model screening process stopped"),
], ids=["preparation", "model screening"])
def test_a_killed_process_fails_the_job_and_frees_the_worker(run, media, settings, monkeypatch, patched, killer,
                                                            deadly, harmless, which):
    settings.GOLDSET_IMPORT_PARALLEL_MIN_MB = 0
    settings.GOLDSET_IMPORT_PROCESSES = 2
    # The processes are forked after this, so they run the patched function.
    monkeypatch.setattr(processes, patched, killer)
    records = [{"title": f"제목 {i}번"} for i in range(1200)]
    records[700] = {"title": deadly}
    job = run("kill.jsonl", jsonl(*records), "jsonl")
    assert_failed(job, media, 0, which, "SIGKILL")
    assert multiprocessing.active_children() == []
    # The process is free for the next import, which runs in such processes too.
    records[700] = {"title": harmless}
    job = run("next.jsonl", jsonl(*records), "jsonl")
    assert job.status == ImportStatus.SUCCEEDED and job.items_written == 1200


def test_a_200_mb_record_is_refused_under_a_memory_cap(run, media, tmp_path):
    """The reader never holds the record: under an address-space cap of 400 MB above what the process uses,
    a 200 MB one-record file fails with the size message (reading it whole, then parsing it, needs more)."""
    line = b'{"title": "' + b"a" * (200 * 1024 * 1024 - 20) + b'"}\n'
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as statm:
        used = int(statm.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (used + 400 * 1024 * 1024 + len(line), hard))
    try:
        job = run("huge.jsonl", line, "jsonl")
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    assert_failed(job, media, 1, "larger than the limit of 1,048,576 characters")


@pytest.mark.django_db(transaction=True)
def test_items_referring_to_a_row_that_is_not_there_fail_the_job_and_nothing_is_written(run, media, monkeypatch):
    """The database checks every reference the import writes (when each batch is written on PostgreSQL, at the
    commit elsewhere; transactions are real here): a source row gone from under the import fails the job, and the
    items, their flags, bands and near-duplicate groups written before the check are all rolled back."""
    def gone(**kwargs: Any) -> Source:
        return Source(pk=Source.objects.count() + 1000, name="gone", license="CC0-1.0")

    monkeypatch.setattr(services, "source_ensure", gone)
    near = "서울시는 다음 달부터 심야버스 노선을 다섯 개 늘리고 배차 간격을 줄인다고 밝혔다"
    job = run("t.jsonl", jsonl(GOOD, {"guid": "x-2", "title": near}, {"guid": "x-3", "title": near + "!"},
                               {"guid": "x-4", "title": "이 씨 발 놈들 다 필요 없다"}), "jsonl")
    assert_failed(job, media, 0, "IntegrityError")
    assert "foreign key" in job.message.lower()
    project = job.project
    assert not Flag.objects.filter(item__project=project).exists()
    assert not MinHashBand.objects.filter(project=project).exists()
    assert not NearDuplicate.objects.filter(project=project).exists()


def test_a_value_the_database_refuses_fails_the_job(run, media, monkeypatch):
    from django.db import DataError

    def refused(self, *batch):
        raise DataError("unsupported Unicode escape sequence")

    monkeypatch.setattr(pipeline.ImportPipeline, "_write", refused)
    job = run("t.jsonl", jsonl(GOOD), "jsonl")
    assert_failed(job, media, 0, "DataError", "unsupported Unicode escape sequence")
