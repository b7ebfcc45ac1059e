"""Releases through the API and the pages: build as a job, poll, list and download files, verify, publish."""

from __future__ import annotations

import hashlib

import pytest
from django.urls import reverse

from annotation.models import Role
from exports.models import Release, ReleaseStatus
from exports.names import metric_name
from tests.builders import load_records, sample_records

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(make_project, make_user, add_member, annotator_in):
    manager = make_user(can_create=True)
    project = make_project("tc", manager=manager)
    load_records(project, sample_records("tc", 200))  # 20 dev records at 0.8/0.1/0.1: enough for a verdict
    maintainer = add_member(project, make_user(), Role.MAINTAINER)
    return {"project": project, "manager": manager, "maintainer": maintainer, "annotator": annotator_in(project)}


def test_build_poll_download_verify_publish(team, api, release_root, django_capture_on_commit_callbacks):
    project, manager, maintainer = team["project"], team["manager"], team["maintainer"]
    base = f"/api/projects/{project.pk}/releases/"
    with django_capture_on_commit_callbacks(execute=True):
        response = api(manager).post(base, {"version": "1.0.0", "splits": "0.8,0.1,0.1", "seed": 9,
                                            "formats": ["klue", "jsonl", "parquet"]}, format="json")
    assert response.status_code == 202, response.data
    assert response.data["status"] == "building"
    release_id = response.data["id"]

    polled = api(manager).get(f"{base}{release_id}/")
    assert polled.status_code == 200
    data = polled.data
    assert data["status"] == "passed", data["error"]
    assert data["splits"] == {"train": 160, "dev": 20, "test": 20}
    assert data["progress"]["phase"] == "done"
    # The baseline check ran on the written KLUE files (the sample headlines name their topic).
    assert data["check"]["passed"] is True and data["check"]["metrics"]
    assert data["leakage"]["clean"] and data["created_by"] == manager.username
    assert (release_root / f"{project.slug}-1.0.0" / "README.md").is_file()

    listed = api(maintainer).get(base)
    assert [r["version"] for r in listed.data] == ["1.0.0"]

    files = api(maintainer).get(f"{base}{release_id}/files/").data
    by_path = {f["path"]: f for f in files}
    assert {"SHA256SUMS", "manifest.json", "README.md", "ynat-v1.1_train.json", "jsonl/dev.jsonl",
            "parquet/test.parquet"} <= set(by_path)
    download = api(maintainer).get(f"{base}{release_id}/files/{by_path['ynat-v1.1_train.json']['id']}/")
    assert download.status_code == 200
    body = b"".join(download.streaming_content)
    assert hashlib.sha256(body).hexdigest() == by_path["ynat-v1.1_train.json"]["sha256"]
    assert "ynat-v1.1_train.json" in download["Content-Disposition"]

    verified = api(manager).post(f"{base}{release_id}/verify/")
    assert verified.status_code == 200 and verified.data["ok"]

    assert api(manager).post(f"{base}{release_id}/publish/").status_code == 403
    published = api(maintainer).post(f"{base}{release_id}/publish/")
    assert published.status_code == 200 and published.data["status"] == "published"
    assert published.data["published_by"] == maintainer.username
    again = api(maintainer).post(f"{base}{release_id}/publish/")
    assert again.status_code == 409
    assert api(manager).delete(f"{base}{release_id}/").status_code == 409
    assert Release.objects.get(pk=release_id).status == ReleaseStatus.PUBLISHED

    # Annotators never see releases.
    annotator = api(team["annotator"])
    assert annotator.get(base).status_code == 403
    assert annotator.get(f"{base}{release_id}/files/{by_path['jsonl/dev.jsonl']['id']}/").status_code == 403


def test_api_refuses_bad_specifications(team, api, release_root, django_capture_on_commit_callbacks):
    project, manager = team["project"], team["manager"]
    base = f"/api/projects/{project.pk}/releases/"
    for body, field in (({"version": "one"}, "version"), ({"version": "1.0.0", "splits": "0.9,0.3"}, "splits"),
                        ({"version": "1.0.0", "splits": "0.8,0.2", "keep_splits": True}, "splits")):
        response = api(manager).post(base, body, format="json")
        assert response.status_code == 400 and response.data["field"] == field, response.data
    assert api(manager).post(base, {"version": "1.0.0", "formats": ["xml"]}, format="json").status_code == 400
    with django_capture_on_commit_callbacks(execute=True):
        assert api(manager).post(base, {"version": "1.0.0", "formats": ["jsonl"]}, format="json").status_code == 202
    assert api(manager).post(base, {"version": "1.0.0"}, format="json").status_code == 409


def test_files_of_an_unfinished_release_are_not_served(team, api, release_root):
    project, manager = team["project"], team["manager"]
    base = f"/api/projects/{project.pk}/releases/"
    # Without running the on-commit job the release stays "building".
    response = api(manager).post(base, {"version": "1.0.0", "formats": ["jsonl"]}, format="json")
    release = Release.objects.get(pk=response.data["id"])
    assert release.status == ReleaseStatus.BUILDING and release.progress == {"phase": "queued"}
    assert api(manager).get(f"{base}{release.pk}/files/").data == []
    assert api(manager).delete(f"{base}{release.pk}/").status_code == 409


def test_release_pages(team, client, release_root, django_capture_on_commit_callbacks):
    project, manager, maintainer = team["project"], team["manager"], team["maintainer"]
    client.force_login(manager)
    page = client.get(reverse("exports:release-list", args=[project.pk]))
    assert page.status_code == 200 and "Build a release" in page.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("exports:release-list", args=[project.pk]), {
            "version": "1.0.0", "mode": "ratios", "splits": "0.8,0.1,0.1", "seed": "4",
            "formats": ["klue", "jsonl", "csv", "parquet"]})
    release = Release.objects.get(project=project)
    assert response.status_code == 302 and response.url == reverse("exports:release-detail", args=[project.pk,
                                                                                                   release.pk])
    detail = client.get(response.url).content.decode()
    assert "Passed" in detail and "ynat-v1.1_train.json" in detail
    assert "<h2>Motivation</h2>" in detail and "Known limitations" in detail  # the card, rendered
    assert "license:" in detail  # its YAML header, shown as is
    # The baseline beside the trivial baseline, per metric, as a table and a plot.
    check = Release.objects.get(pk=release.pk).baseline_check
    assert 'id="baseline-metrics"' in detail and "Baseline vs trivial baseline on dev" in detail
    for name, value in check["metrics"].items():  # named as people name them: macro_f1 is "macro F1"
        assert f"<td>{metric_name(name)}</td><td>{value:.2f}</td><td>{check['trivial'][name]:.2f}</td>" in detail
    assert detail.count("<svg") >= 1 and "(trivial baseline)" in detail
    assert 'id="release-publish"' not in detail  # managers build, maintainers publish
    file = release.files.get(path="csv/dev.csv")
    download = client.get(reverse("exports:release-file", args=[project.pk, release.pk, file.pk]))
    assert download.status_code == 200 and b"".join(download.streaming_content).startswith(b"guid,title,label")
    verify = client.post(reverse("exports:release-verify", args=[project.pk, release.pk]), follow=True)
    assert "match their checksums" in verify.content.decode()
    assert client.post(reverse("exports:release-publish", args=[project.pk, release.pk])).status_code == 403

    # A version that exists is refused on the form.
    again = client.post(reverse("exports:release-list", args=[project.pk]), {
        "version": "1.0.0", "mode": "keep", "formats": ["jsonl"]})
    assert again.status_code == 200 and "Version 1.0.0 already exists" in again.content.decode()

    client.force_login(maintainer)
    detail = client.get(reverse("exports:release-detail", args=[project.pk, release.pk])).content.decode()
    assert 'id="release-publish"' in detail
    published = client.post(reverse("exports:release-publish", args=[project.pk, release.pk]),
                            {"confirm": "publish"}, follow=True)
    assert "is published" in published.content.decode()
    assert Release.objects.get(pk=release.pk).status == ReleaseStatus.PUBLISHED

    client.force_login(team["annotator"])
    assert client.get(reverse("exports:release-list", args=[project.pk])).status_code == 403
    assert client.get(reverse("exports:release-detail", args=[project.pk, release.pk])).status_code == 403
    assert client.get(reverse("exports:release-file", args=[project.pk, release.pk, file.pk])).status_code == 403


def test_a_building_release_page_refreshes(team, client, release_root):
    project, manager = team["project"], team["manager"]
    client.force_login(manager)
    client.post(reverse("exports:release-list", args=[project.pk]), {"version": "1.0.0", "mode": "keep",
                                                             "formats": ["jsonl"]})
    release = Release.objects.get(project=project)
    page = client.get(reverse("exports:release-detail", args=[project.pk, release.pk])).content.decode()
    assert 'data-live-done="0"' in page and "Building: waiting for a worker." in page
