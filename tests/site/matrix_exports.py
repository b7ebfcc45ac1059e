"""Matrix rows for the release API: managers and maintainers only; publishing is the maintainers'."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from tests.site.matrix import Case, curators, managers

P = "api/projects/<int:project_pk>/releases/"
R = "api/projects/<int:project_pk>/contamination/references/"
#: Maintainers (and superusers) publish; managers may build but not publish.
PUBLISHERS = {"outsider": 404, "annotator": 403, "manager": 403, "maintainer": 200, "superuser": 200}

_FOLDERS: list[str] = []


def _cleanup() -> None:
    for folder in _FOLDERS:
        for path in Path(folder).rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        shutil.rmtree(folder, ignore_errors=True)


atexit.register(_cleanup)


def _releasable(sc) -> None:
    """The scenario's annotated item carries an open flag and lacks its second annotation, which keep it out of
    releases: keep the item and give it an adjudicated gold label."""
    from annotation.models import Flag, GoldLabel

    Flag.objects.filter(pk=sc.flag.pk).update(resolution="kept")
    GoldLabel.objects.update_or_create(item=sc.item, defaults={"payload": {"label": "사회"}, "status": "adjudicated",
                                                               "rule": "adjudication"})


def _release(sc) -> int:
    """A built (passed) release of the scenario's project, built on first use (most rows never need one)."""
    if "release" not in sc.extra:
        from exports import services
        from exports.models import Release

        _releasable(sc)
        folder = tempfile.mkdtemp(prefix="goldset-matrix-")
        _FOLDERS.append(folder)
        release = services.release_build(sc.project, version="1.0.0", formats="jsonl", out=folder, agreement=False)
        # A JSONL-only release is unchecked; the matrix is about access, so it is marked passed to be publishable.
        assert release.status == "unchecked", release.error or release.leakage
        Release.objects.filter(pk=release.pk).update(status="passed")
        sc.extra["release"] = release.id
        sc.extra["release_file"] = release.files.get(path="jsonl/train.jsonl").id
    return sc.extra["release"]


def _r(sc, rest: str = "") -> str:
    return f"/api/projects/{sc.project.id}/releases/{rest}"


def _one(sc, rest: str = "") -> str:
    return _r(sc, f"{_release(sc)}/{rest}")


CASES = [
    Case(P, "get", lambda sc: _r(sc), curators(200)),
    Case(P, "post", lambda sc: (_releasable(sc), _r(sc))[1], curators(202),
         body=lambda sc: {"version": "2.0.0", "formats": ["jsonl"]}),
    Case(P + "<int:pk>/", "get", lambda sc: _one(sc), curators(200)),
    Case(P + "<int:pk>/", "delete", lambda sc: _one(sc), curators(204)),
    Case(P + "<int:pk>/files/", "get", lambda sc: _one(sc, "files/"), curators(200)),
    Case(P + "<int:pk>/files/<int:file_pk>/", "get", lambda sc: _one(sc, f"files/{_release_file(sc)}/"),
         curators(200)),
    Case(P + "<int:pk>/archive/", "get", lambda sc: _one(sc, "archive/"), curators(200)),
    Case("api/projects/<int:project_pk>/raters/", "get", lambda sc: f"/api/projects/{sc.project.id}/raters/",
         managers(200)),
    Case(P + "<int:pk>/diff/<int:other>/", "get", lambda sc: _one(sc, f"diff/{_release(sc)}/"), curators(200)),
    Case(P + "<int:pk>/verify/", "post", lambda sc: _one(sc, "verify/"), curators(200)),
    Case(P + "<int:pk>/publish/", "post", lambda sc: _one(sc, "publish/"), PUBLISHERS),
    Case(P + "<int:pk>/contamination/", "get", lambda sc: _one(sc, "contamination/"), curators(200)),
    Case(P + "<int:pk>/contamination/", "post", lambda sc: _one(sc, "contamination/"), curators(202)),
    Case(R, "get", lambda sc: f"/api/projects/{sc.project.id}/contamination/references/", curators(200)),
    # Neither a project nor a file: refused after the role check.
    Case(R, "post", lambda sc: f"/api/projects/{sc.project.id}/contamination/references/", curators(400),
         body=lambda sc: {"name": "nothing"}),
    Case(R + "<int:pk>/", "delete",
         lambda sc: f"/api/projects/{sc.project.id}/contamination/references/{_reference(sc)}/", curators(204)),
    Case("api/projects/<int:project_pk>/items/<int:item_pk>/provenance/", "get",
         lambda sc: f"/api/projects/{sc.project.id}/items/{sc.item.id}/provenance/", curators(200)),
]


def _reference(sc) -> int:
    """A file reference of the scenario's project (its file is not needed to remove it)."""
    from exports.models import ContaminationReference

    return ContaminationReference.objects.create(project=sc.project, kind="file", name="a benchmark",
                                                 format="jsonl", file_name="benchmark.jsonl").pk


def _release_file(sc) -> int:
    _release(sc)
    return sc.extra["release_file"]
