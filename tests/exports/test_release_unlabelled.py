"""A release whose records carry no label is refused, naming the reason, and leaves nothing behind (no release
row, no files): such a release trains and scores nothing."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotation import services as annotation_services
from annotation.models import GoldLabel, GoldStatus
from exports import services
from exports.models import Release, ReleaseStatus

pytestmark = pytest.mark.django_db


def _project(make_project, *, labelled: int):
    project = make_project("tc", k=1)
    for i in range(6):
        item = annotation_services.item_create(project=project, payload={"title": f"기사 {i}"})
        GoldLabel.objects.create(item=item, payload={"label": "경제"} if i < labelled else {"label": None},
                                 status=GoldStatus.ADJUDICATED, rule="adjudication")
    return project


def _build(project, out) -> dict:
    stdout = StringIO()
    call_command("build_release", project.slug, "--version", "1.0.0", "--format", "jsonl", "--out", str(out),
                 "--json", "--no-agreement", stdout=stdout)
    return json.loads(stdout.getvalue())


def test_a_release_with_no_labelled_example_is_refused(make_project, tmp_path):
    project = _project(make_project, labelled=0)
    with pytest.raises(CommandError, match=r"none of the 6 releasable records .* carries a label"):
        _build(project, tmp_path)
    assert not Release.objects.filter(project=project).exists()
    assert not any(tmp_path.iterdir())


def test_one_labelled_example_is_enough(make_project, tmp_path):
    assert _build(_project(make_project, labelled=1), tmp_path)["status"] != ReleaseStatus.ERROR


def test_the_release_page_gives_the_reason_in_the_readers_language(make_project, release_root):
    project = _project(make_project, labelled=0)
    release = services.release_create(project=project, version="1.0.0", formats="jsonl", agreement=False)
    services.release_run(release.pk)
    for language, expected in (("ko", "라벨(label)이 있는 레코드가 하나도 없습니다"),
                               ("en", "carries a label (label)")):
        client = Client(HTTP_ACCEPT_LANGUAGE=language)
        client.force_login(project.created_by)
        page = client.get(f"/projects/{project.pk}/releases/{release.pk}/").content.decode()
        assert expected in page, language
