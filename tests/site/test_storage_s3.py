"""Uploads and releases in an S3-compatible bucket: moto's standalone server, started here as a separate process.

The eager tests run everywhere the dev extra is installed (SQLite included); the live-worker test runs a Celery
worker with a MEDIA_ROOT and temporary folder of its own, so web and worker share nothing but the database, the
broker and the bucket. Everything skips with the reason when moto's server cannot start.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Item, Role
from config.storage import bucket_storages
from datasets_build.models import ImportJob, ImportStatus
from exports import services
from exports.models import Release, ReleaseStatus
from tests.builders import poll, sample_records
from tests.conftest import ROOT, is_postgres

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "goldset-test", "AWS_SECRET_ACCESS_KEY": "goldset-test-secret"}
REGION = "us-east-1"
#: A release of the sample corpus passes its check or is inconclusive; either may be published (with a reason).
PUBLISHABLE = (ReleaseStatus.PASSED, ReleaseStatus.INCONCLUSIVE)
OVERRIDE = {"override_reason": "published by the storage test"}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def moto_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """moto's S3-compatible server on a free port, in its own process, for the whole session."""
    pytest.importorskip("moto.server", reason="moto[server] is not installed (pip install -e '.[dev]')")
    pytest.importorskip("storages.backends.s3", reason="django-storages[s3] is not installed")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(tmp_path_factory.mktemp("moto") / "moto.log", "w")  # noqa: SIM115 - closed at teardown
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                              stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"{url}/moto-api/", timeout=1):
                break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                log.close()
                pytest.skip(f"moto's S3 server did not start (exit {server.poll()}); see {log.name}")
            time.sleep(0.2)
    yield url
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
    log.close()


@dataclass
class Bucket:
    name: str
    endpoint: str
    client: Any

    def objects(self, prefix: str = "") -> list[str]:
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.name, Prefix=prefix)
        return sorted(item["Key"] for page in pages for item in page.get("Contents", []))

    def read(self, key: str) -> bytes:
        return self.client.get_object(Bucket=self.name, Key=key)["Body"].read()

    def storages(self) -> dict[str, dict[str, Any]]:
        return bucket_storages(self.name, endpoint_url=self.endpoint, region_name=REGION)


@pytest.fixture
def bucket(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Bucket:
    """A fresh bucket on the moto server, with the process's boto3 credentials pointing at it."""
    import boto3

    for key, value in CREDENTIALS.items():
        monkeypatch.setenv(key, value)
    client = boto3.client("s3", endpoint_url=moto_endpoint, region_name=REGION, **{
        "aws_access_key_id": CREDENTIALS["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": CREDENTIALS["AWS_SECRET_ACCESS_KEY"]})
    name = f"goldset-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    return Bucket(name, moto_endpoint, client)


@pytest.fixture
def web(bucket: Bucket, settings: Any, tmp_path: Path) -> Path:
    """This process as the web machine: uploads and releases go to the bucket; its local folders stay empty."""
    settings.STORAGES = {**settings.STORAGES, **bucket.storages()}
    settings.MEDIA_ROOT = tmp_path / "web-media"
    settings.GOLDSET_RELEASE_ROOT = str(tmp_path / "web-releases")
    return tmp_path


def files_under(*folders: Path) -> list[Path]:
    return [path for folder in folders if folder.exists() for path in folder.rglob("*") if path.is_file()]


def corpus() -> bytes:
    """200 YNAT-style records with their corpus labels: releasable once imported (as KLUE's own file)."""
    return json.dumps(sample_records("tc", 200), ensure_ascii=False).encode("utf-8")


def check_release_downloads(api_client: Any, base: str, release_id: int) -> dict[str, bytes]:
    """Download every file of the release through the API; each must match its recorded checksum and
    SHA256SUMS; the archive must hold the same bytes. Returns the files by path."""
    files = api_client.get(f"{base}{release_id}/files/").data
    assert files
    bodies: dict[str, bytes] = {}
    for file in files:
        download = api_client.get(f"{base}{release_id}/files/{file['id']}/")
        assert download.status_code == 200 and download.streaming
        bodies[file["path"]] = b"".join(download.streaming_content)
        assert hashlib.sha256(bodies[file["path"]]).hexdigest() == file["sha256"], file["path"]
    listed = dict(reversed(line.split("  ", 1)) for line in bodies["SHA256SUMS"].decode().splitlines())
    assert listed and all(hashlib.sha256(bodies[path]).hexdigest() == digest for path, digest in listed.items())
    assert set(listed) == set(bodies) - {"SHA256SUMS"}
    archive = api_client.get(f"{base}{release_id}/archive/")
    assert archive.status_code == 200
    with tarfile.open(fileobj=io.BytesIO(b"".join(archive.streaming_content)), mode="r:gz") as tar:
        unpacked = {member.name.split("/", 1)[1]: tar.extractfile(member).read() for member in tar.getmembers()}
    assert unpacked == bodies
    verified = api_client.post(f"{base}{release_id}/verify/")
    assert verified.status_code == 200 and verified.data["ok"], verified.data
    return bodies


@pytest.mark.django_db
def test_import_release_download_verify_publish_delete_through_the_bucket(
        web, bucket, api, client, make_project, add_member, make_user, django_capture_on_commit_callbacks):
    """The embedded-default process (eager jobs) with a bucket configured: the upload is stored in the bucket and
    deleted after its import, the release is built, published to the bucket and read back from it by every
    download, the pages, verification, publishing and deletion; nothing is written under MEDIA_ROOT."""
    project = make_project("tc")
    manager = project.created_by
    maintainer = add_member(project, make_user(), Role.MAINTAINER)
    base = f"/api/projects/{project.pk}/"

    with django_capture_on_commit_callbacks(execute=True):
        response = api(manager).post(f"{base}imports/", {
            "file": SimpleUploadedFile("ynat-v1.1_dev.json", corpus()), "format": "klue"}, format="multipart")
    assert response.status_code == 202, response.data
    job = ImportJob.objects.get(pk=response.data["id"])
    assert job.status == ImportStatus.SUCCEEDED, job.errors
    assert job.stored_path.startswith("imports/")  # a name in the bucket, not a path on this machine
    assert Item.objects.filter(project=project).count() == 200
    assert bucket.objects("uploads/") == []  # the upload (raw personal data, possibly) is gone once imported

    with django_capture_on_commit_callbacks(execute=True):
        response = api(manager).post(f"{base}releases/", {"version": "1.0.0", "splits": "0.8,0.1,0.1", "seed": 3},
                                     format="json")
    assert response.status_code == 202, response.data
    release = Release.objects.get(pk=response.data["id"])
    assert release.status in PUBLISHABLE, release.error
    assert release.out_dir == f"{project.slug}-1.0.0"
    stored = bucket.objects(f"releases/{project.slug}-1.0.0/")
    assert sorted(f"releases/{project.slug}-1.0.0/{path}" for path in release.files.values_list("path", flat=True)) \
        == stored
    assert {"README.md", "SHA256SUMS", "manifest.json", "ynat-v1.1_train.json", "parquet/dev.parquet"} <= {
        key.split("/", 2)[2] for key in stored}

    bodies = check_release_downloads(api(maintainer), f"{base}releases/", release.pk)
    assert bodies["README.md"] == bucket.read(f"releases/{project.slug}-1.0.0/README.md")

    # The release page renders the card read from the bucket and serves a file from it.
    client.force_login(manager)
    detail = client.get(reverse("exports:release-detail", args=[project.pk, release.pk])).content.decode()
    assert "<h2>Motivation</h2>" in detail
    assert f"<code>s3://{bucket.name}/releases/{project.slug}-1.0.0</code>" in detail
    csv_file = release.files.get(path="csv/train.csv")
    page_download = client.get(reverse("exports:release-file", args=[project.pk, release.pk, csv_file.pk]))
    assert b"".join(page_download.streaming_content) == bodies["csv/train.csv"]

    # Verification reads the bucket: an object changed there is caught, and such a release cannot be published.
    key = f"releases/{project.slug}-1.0.0/jsonl/dev.jsonl"
    bucket.client.put_object(Bucket=bucket.name, Key=key, Body=bodies["jsonl/dev.jsonl"] + b"{}\n")
    verified = api(manager).post(f"{base}releases/{release.pk}/verify/").data
    assert not verified["ok"] and verified["changed"] == ["jsonl/dev.jsonl"]
    assert api(maintainer).post(f"{base}releases/{release.pk}/publish/", OVERRIDE).status_code == 409
    bucket.client.put_object(Bucket=bucket.name, Key=key, Body=bodies["jsonl/dev.jsonl"])
    assert api(maintainer).post(f"{base}releases/{release.pk}/publish/", OVERRIDE).status_code == 200

    # A second release, deleted: its objects go with it; the published one stays.
    with django_capture_on_commit_callbacks(execute=True):
        second = api(manager).post(f"{base}releases/", {"version": "1.1.0", "formats": ["jsonl"]}, format="json")
    assert bucket.objects(f"releases/{project.slug}-1.1.0/")
    assert api(manager).delete(f"{base}releases/{second.data['id']}/").status_code == 204
    assert bucket.objects(f"releases/{project.slug}-1.1.0/") == []
    assert bucket.objects(f"releases/{project.slug}-1.0.0/") == stored

    assert files_under(web / "web-media", web / "web-releases") == []


@pytest.mark.django_db
def test_uploads_refused_or_failed_leave_nothing_in_the_bucket(web, bucket, api, make_project, settings,
                                                               django_capture_on_commit_callbacks):
    project = make_project("tc")
    url = f"/api/projects/{project.pk}/imports/"
    settings.GOLDSET_MAX_UPLOAD_MB = 1
    too_big = api(project.created_by).post(url, {
        "file": SimpleUploadedFile("big.jsonl", b'{"title": "' + b"a" * (2 << 20) + b'"}\n'), "format": "jsonl"},
        format="multipart")
    assert too_big.status_code == 400 and "upload limit" in str(too_big.data)
    empty = api(project.created_by).post(url, {"file": SimpleUploadedFile("e.jsonl", b""), "format": "jsonl"},
                                         format="multipart")
    assert empty.status_code == 400
    with django_capture_on_commit_callbacks(execute=True):
        broken = api(project.created_by).post(url, {
            "file": SimpleUploadedFile("b.jsonl", b'{"title": "\\u0000", "a\\u0000b": 1}\n{"title": [[[['),
            "format": "jsonl"}, format="multipart")
    assert broken.status_code == 202
    assert ImportJob.objects.get(pk=broken.data["id"]).status == ImportStatus.FAILED
    assert bucket.objects() == []
    assert files_under(web / "web-media") == []


@pytest.mark.django_db
def test_predictions_upload_is_read_from_the_bucket_and_deleted(web, bucket, api, make_project,
                                                                django_capture_on_commit_callbacks):
    from exports.models import SuggesterRun, SuggesterRunStatus
    from tests.builders import load_records

    project = make_project("tc")
    items = load_records(project, sample_records("tc", 5))
    lines = "".join(json.dumps({"item": item.pk, "payload": {"label": "경제"}}, ensure_ascii=False) + "\n"
                    for item in items)
    with django_capture_on_commit_callbacks(execute=True):
        response = api(project.created_by).post(f"/api/projects/{project.pk}/suggester/predictions/", {
            "file": SimpleUploadedFile("p.jsonl", lines.encode()), "format": "jsonl"}, format="multipart")
    assert response.status_code == 202, response.data
    run = SuggesterRun.objects.get(pk=response.data["id"])
    assert run.status == SuggesterRunStatus.DONE, run.error
    assert run.suggestions == 5 and run.stored_path.startswith("suggester/")
    assert bucket.objects() == []


@pytest.mark.django_db
def test_a_bucket_upload_cut_short_is_uploaded_again_by_the_retry(web, bucket, make_project, monkeypatch):
    """The database is lost while the finished release is being uploaded (after two files): the retry finds a
    prefix without SHA256SUMS, clears it and builds and uploads the whole release again."""
    from django.db import OperationalError

    from config.storage import StoredFolder
    from tests.builders import load_records

    project = make_project("tc")
    load_records(project, sample_records("tc", 60))
    release = services.release_create(project=project, version="1.0.0", formats=["jsonl"])
    publish = StoredFolder.publish

    def cut_short(self: StoredFolder, folder: Path) -> None:
        first = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "SHA256SUMS")[:2]
        cut = folder.parent / "cut"
        for path in first:
            (cut / path.relative_to(folder)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, cut / path.relative_to(folder))
        publish(self, cut)
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(StoredFolder, "publish", cut_short)
    with pytest.raises(OperationalError):
        services.release_run(release.pk)
    prefix = f"releases/{project.slug}-1.0.0/"
    assert len(bucket.objects(prefix)) == 2 and f"{prefix}SHA256SUMS" not in bucket.objects(prefix)
    monkeypatch.setattr(StoredFolder, "publish", publish)
    release = services.release_run(release.pk)
    assert release.status not in (ReleaseStatus.ERROR, ReleaseStatus.BUILDING), release.error
    assert services.release_verify(release)["ok"]
    assert len(bucket.objects(prefix)) == release.files.count()


@pytest.mark.django_db
def test_build_release_command_writes_to_the_bucket_unless_given_a_folder(web, bucket, make_project, tmp_path):
    from tests.builders import load_records

    project = make_project("tc")
    load_records(project, sample_records("tc", 60))
    out = io.StringIO()
    call_command("build_release", project.slug, "--version", "1.0.0", "--format", "jsonl", "--json", stdout=out)
    assert json.loads(out.getvalue())["out"] == f"s3://{bucket.name}/releases/{project.slug}-1.0.0"
    assert f"releases/{project.slug}-1.0.0/SHA256SUMS" in bucket.objects()
    call_command("build_release", project.slug, "--version", "1.0.1", "--format", "jsonl",
                 "--out", str(tmp_path / "here"), stdout=io.StringIO())
    assert (tmp_path / "here" / f"{project.slug}-1.0.1" / "SHA256SUMS").is_file()
    assert not bucket.objects(f"releases/{project.slug}-1.0.1/")
    assert services.release_verify(Release.objects.get(version="1.0.1"))["ok"]


# -- web and worker on "different machines" -------------------------------------------------------------------


@pytest.fixture
def bucket_worker(bucket: Bucket, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A Celery worker with the bucket configured through its environment, a MEDIA_ROOT and a temporary folder of
    its own, consuming a queue of its own: (its queue, its folder)."""
    if not os.environ.get("CELERY_BROKER_URL"):
        pytest.skip("CELERY_BROKER_URL not set: no broker for a live worker")
    if not is_postgres():
        pytest.skip("a live worker needs a shared database (set DATABASE_URL to PostgreSQL)")
    from django.db import connection

    from config.celery import app as celery_app

    settings_dict = connection.settings_dict
    password = f":{settings_dict['PASSWORD']}" if settings_dict.get("PASSWORD") else ""
    database = (f"postgres://{settings_dict['USER'] or ''}{password}@{settings_dict['HOST'] or ''}:"
                f"{settings_dict['PORT'] or 5432}/{settings_dict['NAME']}")
    machine = tmp_path / "worker-machine"
    (machine / "tmp").mkdir(parents=True)
    queue = f"goldset-s3-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    env = {**os.environ, **CREDENTIALS, "DATABASE_URL": database, "AWS_STORAGE_BUCKET_NAME": bucket.name,
           "AWS_S3_ENDPOINT_URL": bucket.endpoint, "AWS_S3_REGION_NAME": REGION,
           "GOLDSET_MEDIA_ROOT": str(machine / "media"), "TMPDIR": str(machine / "tmp")}
    celery = shutil.which("celery", path=str(Path(sys.executable).parent)) or "celery"
    name = f"{queue}@{socket.gethostname()}"
    with open(machine / "celery.log", "w") as log:
        worker = subprocess.Popen([celery, "-A", "config", "worker", "--loglevel=INFO", "--concurrency=1",
                                   "--without-mingle", "--without-gossip", "-Q", queue, "-n", name],
                                  cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not celery_app.control.ping(destination=[name], timeout=1.0):
            if worker.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the bucket worker did not start; see {machine / 'celery.log'}")
        yield queue, machine
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()


@pytest.mark.worker
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_web_and_worker_share_only_database_broker_and_bucket(web, bucket, bucket_worker, api, make_project,
                                                              add_member, make_user, monkeypatch):
    """The test process is the web machine, the worker another: each has its own MEDIA_ROOT (and the worker its
    own temporary folder). An upload imported by the worker, a release built by it and downloaded, verified and
    published through the web: both local folders stay empty, the worker's scratch files are gone."""
    from datasets_build.tasks import run_import
    from exports.tasks import release_build_task

    queue, machine = bucket_worker
    for task in (run_import, release_build_task):
        monkeypatch.setattr(task, "apply_async", functools.partial(task.apply_async, queue=queue))
    project = make_project("tc")
    manager = project.created_by
    maintainer = add_member(project, make_user(), Role.MAINTAINER)
    base = f"/api/projects/{project.pk}/"

    response = api(manager).post(f"{base}imports/", {
        "file": SimpleUploadedFile("ynat-v1.1_dev.json", corpus()), "format": "klue"}, format="multipart")
    assert response.status_code == 202, response.data
    job = poll(lambda: ImportJob.objects.get(pk=response.data["id"]), lambda job: job.is_finished, "the import")
    assert job.status == ImportStatus.SUCCEEDED, job.errors
    assert Item.objects.filter(project=project).count() == 200
    assert bucket.objects("uploads/") == []

    response = api(manager).post(f"{base}releases/", {"version": "1.0.0", "seed": 5}, format="json")
    assert response.status_code == 202, response.data
    release = poll(lambda: Release.objects.get(pk=response.data["id"]),
                   lambda built: built.status not in (ReleaseStatus.BUILDING, ReleaseStatus.CHECKING), "the release")
    assert release.status in PUBLISHABLE, release.error
    assert len(bucket.objects(f"releases/{project.slug}-1.0.0/")) == release.files.count()
    check_release_downloads(api(maintainer), f"{base}releases/", release.pk)
    assert api(maintainer).post(f"{base}releases/{release.pk}/publish/", OVERRIDE).status_code == 200

    assert files_under(web / "web-media", web / "web-releases", machine / "media") == []
    assert list((machine / "tmp").glob("goldset-*")) == []  # the worker's copy of the upload and release scratch
