"""A full disk and a read-only output folder while ``build_release --out DIR`` writes (issue 9, faults), and a
full disk or a failing storage while an upload is stored (issue 35, finding 6).

The command runs in a private mount namespace (``unshare``) where DIR is a small tmpfs that holds a copy
of the previous release and little else, or a read-only bind mount of the real folder; nothing outside the
namespace sees those mounts. The command must fail with one clear line naming the cause and the place,
leave the previous release byte for byte as it was, leave no temporary folder or work file behind, and
leave the new Release row in error, never marked built.
"""

from __future__ import annotations

import errno
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.files.storage import FileSystemStorage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from annotation.models import Project
from datasets_build.models import ImportJob
from datasets_build.services import items_import
from exports.integrity import sha256_file, verify_folder
from exports.models import Release, ReleaseStatus
from tests.conftest import ROOT, is_postgres
from tests.faults.helpers import subprocess_env, write_tc_jsonl

#: Free space left on the small file system once the previous release is on it; the new one needs more.
FREE_KIB = 64


def unshare_prefix() -> list[str]:
    """How to get a private mount namespace here: as root directly, else through a user namespace."""
    if not shutil.which("unshare"):
        pytest.skip("unshare (util-linux) is not installed")
    for prefix in (["unshare", "--mount", "--propagation", "private"],
                   ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"]):
        probe = subprocess.run([*prefix, "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt && touch /mnt/probe"],
                               capture_output=True)
        if probe.returncode == 0:
            return prefix
    pytest.skip(f"cannot create a mount namespace with a tmpfs here: {probe.stderr.decode().strip()}")


@pytest.fixture
def previous(db: None, make_project, tmp_path: Path) -> tuple[Project, Path, dict[str, str]]:
    """A project with release 1.0.0 built into ``tmp_path/out``, and the checksums of its files."""
    if not is_postgres():
        pytest.skip("the command runs in a subprocess and needs a shared database (set DATABASE_URL to PostgreSQL)")
    project = make_project("tc")
    assert items_import(project, write_tc_jsonl(tmp_path / "items.jsonl", 600), "jsonl").ok
    out = tmp_path / "out"
    call_command("build_release", project.slug, "--version", "1.0.0", "--out", str(out), "--no-agreement")
    folder = out / f"{project.slug}-1.0.0"
    return project, out, {name.relative_to(folder).as_posix(): sha256_file(name)
                          for name in folder.rglob("*") if name.is_file()}


def build_in_namespace(project: Project, script: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` (sh) in a private mount namespace; ``$BUILD`` runs build_release 1.1.0 --out "$OUT"."""
    build = f'"{sys.executable}" manage.py build_release {project.slug} --version 1.1.0 --out "$OUT" --no-agreement'
    return subprocess.run([*unshare_prefix(), "sh", "-c", script], cwd=ROOT, capture_output=True, text=True,
                          env=subprocess_env(BUILD=build, **env), timeout=600)


def assert_failed_cleanly(project: Project, out: Path, before: dict[str, str], result: subprocess.CompletedProcess,
                          cause: str, shown_out: Path) -> None:
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"CommandError: release 1.1.0 failed: {cause} while writing {shown_out / f'{project.slug}-1.1.0'}")
    folder = out / f"{project.slug}-1.0.0"
    assert sorted(p.name for p in out.iterdir()) == [folder.name]  # no partial folder, no work file
    assert {p.relative_to(folder).as_posix(): sha256_file(p) for p in folder.rglob("*") if p.is_file()} == before
    assert verify_folder(folder)["ok"]
    failed = Release.objects.get(project=project, version="1.1.0")
    assert failed.status == ReleaseStatus.ERROR and cause in failed.error and not failed.files.exists()
    assert Release.objects.get(project=project, version="1.0.0").status in (
        ReleaseStatus.PASSED, ReleaseStatus.INCONCLUSIVE, ReleaseStatus.UNCHECKED, ReleaseStatus.FAILED)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_full_disk_fails_with_a_clear_error_and_keeps_the_previous_release(previous, tmp_path):
    project, out, before = previous
    used_kib = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) // 1024
    assert used_kib > 4 * FREE_KIB  # a release is much bigger than the room left for it
    small = tmp_path / "small"
    small.mkdir()
    after = tmp_path / "after"  # what the small file system held afterwards, copied out of the namespace
    after.mkdir()
    # tmpfs counts whole pages per file: size it from what the copy really takes, plus FREE_KIB.
    script = """set -e
mount -t tmpfs -o size=16m tmpfs "$OUT"
cp -a "$PREVIOUS/." "$OUT/"
used=$(df -k --output=used "$OUT" | tail -1)
mount -o remount,size=$((used + FREE_KIB))k "$OUT"
set +e
sh -c "$BUILD"
rc=$?
cp -a "$OUT/." "$AFTER/"
exit $rc"""
    result = build_in_namespace(project, script, OUT=str(small), PREVIOUS=str(out), AFTER=str(after),
                                FREE_KIB=str(FREE_KIB))
    assert_failed_cleanly(project, after, before, result, "no space left on device", small)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_read_only_output_folder_fails_with_a_clear_error_and_keeps_the_previous_release(previous):
    project, out, before = previous
    script = """set -e
mount --bind "$OUT" "$OUT"
mount -o remount,bind,ro "$OUT"
exec sh -c "$BUILD"
"""
    result = build_in_namespace(project, script, OUT=str(out))
    assert_failed_cleanly(project, out, before, result, "read-only file system", out)


# -- uploads to a full disk or a failing storage ------------------------------------------------------

#: The size of the small file system the uploads go to, and of an upload that does not fit in it.
SMALL_DISK_KIB = 64
TOO_LARGE_RECORDS = 3000  # about 200 KiB of JSONL


@pytest.fixture
def small_disk(tmp_path: Path, settings) -> Iterator[Path]:
    """MEDIA_ROOT (where uploads are stored) on a tmpfs of SMALL_DISK_KIB: a real full disk, ENOSPC from the
    kernel. Mounted as root in a folder of the test's own, unmounted afterwards."""
    folder = tmp_path / "media"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SMALL_DISK_KIB}k", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {mounted.stderr.strip()}")
    settings.MEDIA_ROOT = str(folder)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "--lazy", str(folder)], check=True)


def stored_files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def corpus(tmp_path: Path, records: int, name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(f"{name}.jsonl", write_tc_jsonl(tmp_path / f"{name}.jsonl", records, prefix=name)
                              .read_bytes())


@pytest.mark.django_db
def test_an_upload_to_a_full_disk_answers_507_json_and_leaves_no_partial_file(
        small_disk, api, make_project, tmp_path, django_capture_on_commit_callbacks):
    project = make_project("tc")
    client = api(project.created_by)
    response = client.post(f"/api/projects/{project.pk}/imports/", {
        "file": corpus(tmp_path, TOO_LARGE_RECORDS, "large"), "format": "jsonl"}, format="multipart")
    assert response.status_code == 507, response.content[:500]
    assert response["Content-Type"] == "application/json"
    assert response.json()["code"] == "storage_full" and "no storage space left" in response.json()["detail"]
    assert stored_files(small_disk) == [] and not ImportJob.objects.filter(project=project).exists()

    # The space is back (nothing half-written holds it): the next upload is stored and imported.
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/projects/{project.pk}/imports/", {
            "file": corpus(tmp_path, 300, "small"), "format": "jsonl"}, format="multipart")
    assert response.status_code == 202, response.content[:500]
    assert ImportJob.objects.get(project=project).items_written == 300


@pytest.mark.django_db
def test_the_import_page_on_a_full_disk_answers_507_with_a_page_in_the_users_language(small_disk, client,
                                                                                    make_project, tmp_path):
    project = make_project("tc")
    client.force_login(project.created_by)
    form = {"format": "jsonl", "source": "", "license": "", "pii": "", "encoding": "auto", "duplicates": "skip"}
    response = client.post(f"/projects/{project.pk}/import/", {
        "file": corpus(tmp_path, TOO_LARGE_RECORDS, "large"), **form}, HTTP_ACCEPT_LANGUAGE="ko")
    assert response.status_code == 507
    page = response.content.decode()
    assert response["Content-Type"].startswith("text/html") and "저장 공간" in page and "Traceback" not in page
    assert stored_files(small_disk) == [] and not ImportJob.objects.filter(project=project).exists()
    response = client.post(f"/projects/{project.pk}/import/", {"file": corpus(tmp_path, 300, "small"), **form})
    assert response.status_code == 302


@pytest.mark.django_db
def test_a_failing_storage_answers_503_json_with_retry_after_and_leaves_no_partial_file(api, make_project, settings,
                                                                                     tmp_path, monkeypatch):
    """A storage that fails in the middle of a file (an I/O error; a bucket behaves alike) after writing part of it."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    save = FileSystemStorage._save

    def failing_save(self: FileSystemStorage, name: str, content) -> str:
        chunks = content.chunks
        written.append(Path(self.path(name)))

        def some_then_fail(chunk_size=None):
            for n, chunk in enumerate(chunks(1024)):
                if n == 3:
                    raise OSError(errno.EIO, "Input/output error")
                yield chunk

        content.chunks = some_then_fail
        return save(self, name, content)

    written: list[Path] = []
    monkeypatch.setattr(FileSystemStorage, "_save", failing_save)
    project = make_project("tc")
    response = api(project.created_by).post(f"/api/projects/{project.pk}/imports/", {
        "file": corpus(tmp_path, 300, "any"), "format": "jsonl"}, format="multipart")
    assert response.status_code == 503 and response["Retry-After"] == "60", response.content[:300]
    assert response.json()["code"] == "storage_unavailable"
    assert written and not written[0].exists()  # it was begun, and is gone
    assert stored_files(tmp_path / "media") == [] and not ImportJob.objects.filter(project=project).exists()
