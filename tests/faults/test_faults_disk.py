"""A full disk and a read-only output folder while ``build_release --out DIR`` writes (issue 9, faults).

The command runs in a private mount namespace (``unshare``) where DIR is a small tmpfs that holds a copy
of the previous release and little else, or a read-only bind mount of the real folder; nothing outside the
namespace sees those mounts. The command must fail with one clear line naming the cause and the place,
leave the previous release byte for byte as it was, leave no temporary folder or work file behind, and
leave the new Release row in error, never marked built.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Project
from datasets_build.services import items_import
from exports.integrity import sha256_file, verify_folder
from exports.models import Release, ReleaseStatus
from tests.conftest import ROOT, is_postgres
from tests.faults.helpers import subprocess_env, write_tc_jsonl

pytestmark = [pytest.mark.postgres]

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
