"""The dev and test splits of a release checked for contamination: against the train split of every earlier
release of the project, another project a maintainer named and a file a maintainer uploaded. Exact copies (the
same item or text) and near duplicates (MinHash, as the import computes it) are found, counted, listed with
what they match, recorded on the release, shown on its page, and nothing else is; the project's policy decides
whether they fail the release. At build time and on demand, through the page, the API and the command."""

from __future__ import annotations

import json
import os
from itertools import islice
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import AuditEvent, Item, Role
from exports import contamination_services
from exports.models import ContaminationCheck, ContaminationReference, Release
from tests.annotation.settings_form import posted, settings_url
from tests.builders import load_records, sample_records
from tests.exports.release_history import found_hits, planted_texts, split_as, write_reference
from tests.site.visible_text import offending_text

pytestmark = pytest.mark.django_db


def test_exact_and_near_copies_are_found_across_releases_projects_and_files_and_nothing_else(planted):
    first = Release.objects.get(pk=planted["first"].pk).contamination
    assert first["clean"] is True and first["hits"] == [] and not first["fails"]
    release = Release.objects.get(pk=planted["second"].pk)
    found = release.contamination
    assert found["against"] == ["1.0.0"] and found["clean"] is False
    assert found_hits(found) == planted["expected"]
    assert found["exact"] == {"test": 3, "dev": 1} and found["near"] == {"test": 2, "dev": 1}
    assert found["by_split"] == [{"split": "dev", "exact": 1, "near": 1}, {"split": "test", "exact": 3, "near": 2}]
    by_reference = {r["name"]: (r["kind"], r["exact"], r["near"], r["training"]) for r in found["references"]}
    assert by_reference == {"other-corpus": ("project", 1, 1, True), "benchmark": ("file", 1, 1, False)}
    # What each hit matched: the other project's item, the file's record (line), and the estimated similarity.
    hits = {h["item"]: h for h in found["hits"] if h["reference"]}
    other_ids = planted["in_other"]
    assert sorted(h["match"] for h in hits.values() if h["reference"] == "other-corpus") == other_ids[:2]
    assert sorted(h["match"] for h in hits.values() if h["reference"] == "benchmark") == [4, 5]
    assert all(h["similarity"] == 1.0 for h in hits.values() if h["kind"] == "exact")
    assert all(0.8 <= h["similarity"] < 1.0 for h in hits.values() if h["kind"] == "near")
    # The default policy: test items found in training data fail the release; the rest warn.
    assert found["policy"] == "test_training" and found["fails"] is True
    assert found["failing"] == len(planted["failing"])
    assert release.status == "failed"
    # The release's manifest and card record the counts (the hits, with item ids, stay in Goldset).
    folder = Path(release.out_dir)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["contamination"]["exact"] == {"test": 3, "dev": 1} and manifest["contamination"]["fails"]
    assert {r["name"] for r in manifest["contamination"]["references"]} == {"other-corpus", "benchmark"}
    card = (folder / "README.md").read_text()
    assert ("### Contamination check\n\n**FAILS the project's policy** — dev and test items checked against the "
            "train split of 1.0.0, file reference benchmark, project reference other-corpus (training data): "
            "dev: 1 exact, 1 near; test: 3 exact, 2 near.") in card


def test_the_policy_decides_whether_hits_fail_and_is_set_on_the_settings_page(planted, client):
    project, manager = planted["project"], planted["manager"]
    client.force_login(manager)
    for language, words in (("en", "When a dev or test item is found in other data"),
                            ("ko", "개발 또는 평가 항목이 다른 데이터에서 발견되면")):
        page = client.get(settings_url(project), HTTP_ACCEPT_LANGUAGE=language).content.decode()
        assert words in page
    response = client.post(settings_url(project), posted(project, contamination_policy="warn"))
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.options["contamination_policy"] == "warn"
    event = AuditEvent.objects.filter(project=project, action="update").latest("at")
    assert event.after["options"]["contamination_policy"] == "warn"
    warned = contamination_services.check_request(release=planted["second"], by=manager, now=True).result
    assert warned["fails"] is False and found_hits(warned) == planted["expected"]

    response = client.post(settings_url(project), posted(project, contamination_policy="any"))
    assert response.status_code == 302
    every = contamination_services.check_request(release=planted["second"], by=manager, now=True).result
    assert every["fails"] is True and every["failing"] == len({h[0] for h in planted["expected"]})


def test_the_policy_through_the_api_refuses_an_unknown_value(planted, api):
    project = planted["project"]
    client = api(planted["manager"])
    bad = client.patch(f"/api/projects/{project.pk}/", {"options": {"contamination_policy": "sometimes"}},
                       format="json")
    assert bad.status_code == 400 and "contamination_policy" in json.dumps(bad.data)
    project.refresh_from_db()
    assert "contamination_policy" not in project.options
    ok = client.patch(f"/api/projects/{project.pk}/", {"options": {"contamination_policy": "warn"}}, format="json")
    assert ok.status_code == 200
    project.refresh_from_db()
    assert project.options["contamination_policy"] == "warn"


def test_contamination_through_the_api_and_the_release_page(planted, api, client):
    project, second = planted["project"], planted["second"]
    data = api(planted["manager"]).get(f"/api/projects/{project.pk}/releases/{second.pk}/").data
    assert found_hits(data["contamination"]) == planted["expected"]
    assert any("contamination policy" in reason for reason in data["reasons"])
    client.force_login(planted["manager"])
    for language, words in (("en", "Dev or test items are in the train split of an earlier release (1.0.0)"),
                            ("ko", "개발·평가 분할의 항목이 이전 배포(1.0.0)의 학습 분할에 들어 있습니다")):
        page = client.get(f"/projects/{project.pk}/releases/{second.pk}/",
                          HTTP_ACCEPT_LANGUAGE=language).content.decode()
        assert words in page
        if language == "ko":  # a contaminated release's page reads as Korean too (the demo builds none)
            data = [project.name, project.slug, planted["manager"].username,
                    *ContaminationReference.objects.filter(project=project).values_list("name", flat=True),
                    *(item.payload["title"] for item in Item.objects.filter(project=project))]
            assert not offending_text(page, data=data), offending_text(page, data=data)
        for item, _split, _kind, against in planted["expected"]:
            assert f'<li data-item="{item}" data-against="{against}">' in page
        assert f'data-item="{planted["unrelated"]}"' not in page
        assert 'id="contamination-fails"' in page
    clean = client.get(f"/projects/{project.pk}/releases/{planted['first'].pk}/").content.decode()
    assert 'id="contamination-hits"' not in clean


def test_a_check_on_demand_through_the_api_the_page_and_the_command(planted, api, client, capsys,
                                                                  django_capture_on_commit_callbacks):
    project, second, manager = planted["project"], planted["second"], planted["manager"]
    url = f"/api/projects/{project.pk}/releases/{second.pk}/contamination/"
    # A reference added after the build: the check on demand finds its copy, the build's result stays as it was.
    text_of_dev = Item.objects.filter(project=project, split="dev").order_by("id")[5]
    extra = write_reference(planted["out"] / "late.jsonl", [text_of_dev.payload["title"]])
    with extra.open("rb") as upload:
        contamination_services.reference_add_file(project=project, upload=upload, file_name="late.jsonl",
                                                  fmt="jsonl", by=manager, name="late")
    with django_capture_on_commit_callbacks(execute=True):
        response = api(manager).post(url)
    assert response.status_code == 202, response.data
    assert response.data["status"] == "queued"  # the job runs after the commit
    listed = api(manager).get(url).data
    assert listed["checks"][0]["id"] == response.data["id"] and listed["checks"][0]["status"] == "done"
    result = listed["checks"][0]["result"]
    assert found_hits(result) == planted["expected"] | {(text_of_dev.pk, "dev", "exact", "late")}
    assert found_hits(listed["build"]) == planted["expected"]
    assert AuditEvent.objects.filter(project=project, action="check_contamination").count() == 1

    client.force_login(manager)
    with django_capture_on_commit_callbacks(execute=True):
        page = client.post(f"/projects/{project.pk}/releases/{second.pk}/contamination/", follow=True)
    assert page.status_code == 200
    assert ContaminationCheck.objects.filter(release=second).count() == 2
    for language, words, hits in (("en", "Latest check on demand", "8 hits"), ("ko", "최근 요청 점검", "8건")):
        text = client.get(f"/projects/{project.pk}/releases/{second.pk}/",
                          HTTP_ACCEPT_LANGUAGE=language).content.decode()
        assert words in text and hits in text

    with pytest.raises(CommandError) as failed:
        call_command("contamination_check", project.slug, "1.1.0", "--json")
    assert failed.value.returncode == 1 and "fail release 1.1.0" in str(failed.value)
    printed = json.loads(capsys.readouterr().out)
    assert len(found_hits(printed)) == 8
    assert ContaminationCheck.objects.filter(release=second).count() == 3
    with pytest.raises(CommandError, match=r"has no release 9\.9\.9"):
        call_command("contamination_check", project.slug, "9.9.9")


def test_a_clean_release_passes_the_command(planted, capsys):
    project = planted["project"].slug
    # Checked now, 1.0.0's test items are in the references added since (the build's result stays clean).
    with pytest.raises(CommandError, match="1 item"):
        call_command("contamination_check", project, "1.0.0")
    for name in ("benchmark", "other-corpus"):
        call_command("contamination_reference", project, "--remove", name)
    capsys.readouterr()
    call_command("contamination_check", project, "1.0.0")
    assert "clean" in capsys.readouterr().out


def test_references_through_the_api(planted, api, make_user, make_project, add_member, tmp_path, media,
                                    django_capture_on_commit_callbacks):
    project, manager = planted["project"], planted["manager"]
    base = f"/api/projects/{project.pk}/contamination/references/"
    client = api(manager)
    listed = client.get(base).data
    assert {(r["name"], r["kind"], r["records"], r["skipped"]) for r in listed} == {
        ("other-corpus", "project", 12, 0), ("benchmark", "file", 6, 1)}
    path = write_reference(tmp_path / "upload.jsonl", planted_texts(3, 7))
    with path.open("rb") as upload:
        made = client.post(base, {"file": upload, "format": "jsonl", "name": "upload", "training": "false"},
                           format="multipart")
    assert made.status_code == 201, made.data
    assert made.data["records"] == 3 and made.data["training"] is False
    # Bad input is refused with the reason, and nothing is kept.
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text('{"guid": "a"}\n{"guid": "b"}\n', encoding="utf-8")
    with garbage.open("rb") as upload:
        refused = client.post(base, {"file": upload, "format": "jsonl"}, format="multipart")
    assert refused.status_code == 400 and "no record of the file reads as a tc item" in refused.data["detail"]
    assert len(list((media / "references").iterdir())) == 2  # the refused upload is not kept
    with path.open("rb") as upload:
        taken = client.post(base, {"file": upload, "format": "jsonl", "name": "upload"}, format="multipart")
    assert taken.status_code == 409
    assert client.post(base, {"name": "both"}, format="json").status_code == 400
    stranger = make_project("tc", slug="not-mine")
    assert client.post(base, {"project": stranger.pk}, format="json").status_code == 403
    assert client.post(base, {"project": project.pk}, format="json").status_code == 403
    assert ContaminationReference.objects.filter(project=project).count() == 3
    # Annotators never reach references; maintainers do.
    annotator = add_member(project, make_user(), Role.ANNOTATOR)
    assert api(annotator).get(base).status_code == 403
    assert api(planted["maintainer"]).get(base).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        gone = client.delete(f"{base}{made.data['id']}/")
    assert gone.status_code == 204
    assert len(list((media / "references").iterdir())) == 1  # its file goes with it
    assert AuditEvent.objects.filter(project=project, action="remove_reference").count() == 1
    assert AuditEvent.objects.filter(project=project, action="add_reference").count() == 3


def test_references_page_in_both_languages(planted, client, tmp_path):
    project = planted["project"]
    client.force_login(planted["manager"])
    url = f"/projects/{project.pk}/releases/references/"
    for language, words in (("en", "Contamination references"), ("ko", "오염 점검 참조 데이터")):
        page = client.get(url, HTTP_ACCEPT_LANGUAGE=language).content.decode()
        assert words in page and "benchmark" in page and "other-corpus" in page
    path = write_reference(tmp_path / "page.jsonl", planted_texts(2, 8))
    with path.open("rb") as upload:
        response = client.post(url, {"action": "file", "file": upload, "format": "jsonl", "name": "from page"},
                               follow=True)
    assert response.status_code == 200
    assert ContaminationReference.objects.filter(project=project, name="from page", records=2).exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n", encoding="utf-8")
    with bad.open("rb") as upload:
        refused = client.post(url, {"action": "file", "file": upload, "format": "jsonl", "name": "bad"})
    assert refused.status_code == 400
    assert not ContaminationReference.objects.filter(project=project, name="bad").exists()


def test_references_through_the_command(planted, tmp_path, capsys):
    project = planted["project"]
    path = write_reference(tmp_path / "cmd.jsonl", planted_texts(2, 6))
    call_command("contamination_reference", project.slug, "--file", str(path), "--format", "jsonl", "--name", "cmd")
    assert "added cmd: 2 records" in capsys.readouterr().out
    call_command("contamination_reference", project.slug, "--list")
    assert "cmd\tfile" in capsys.readouterr().out
    with pytest.raises(CommandError, match="needs --format"):
        call_command("contamination_reference", project.slug, "--file", str(path))
    call_command("contamination_reference", project.slug, "--remove", "cmd")
    assert not ContaminationReference.objects.filter(project=project, name="cmd").exists()


KLUE_DIR = os.environ.get("KLUE_DATA_DIR")


@pytest.mark.skipif(not KLUE_DIR, reason="KLUE_DATA_DIR is not set")
def test_a_klue_dev_file_as_an_external_reference(make_project, make_user, tmp_path, media):
    from datasets_build.klue_formats import iter_klue_records
    from exports import services

    path = Path(KLUE_DIR) / "klue-sts-v1.1_dev.json"
    if not path.is_file():
        pytest.skip("no klue-sts-v1.1_dev.json in KLUE_DATA_DIR")
    manager = make_user(can_create=True)
    project = make_project("sts", manager=manager)
    copied = load_records(project, [record for _n, record in islice(iter_klue_records(path, "sts"), 2)],
                          split="test")
    own = load_records(project, sample_records("sts", 23))
    split_as(own[:3], "test")
    split_as(own[3:], "train")
    with path.open("rb") as upload:
        reference = contamination_services.reference_add_file(
            project=project, upload=upload, file_name=path.name, fmt="klue", by=manager, name="KLUE STS dev",
            training=False)
    assert reference.records > 500
    release = services.release_build(project, version="1.0.0", keep_splits=True, formats="jsonl", out=tmp_path,
                                     refresh_gold=False, agreement=False)
    found = Release.objects.get(pk=release.pk).contamination
    assert {(h["item"], h["kind"], h["reference"]) for h in found["hits"]} == {
        (i.pk, "exact", "KLUE STS dev") for i in copied}
    assert found["references"][0]["exact"] == 2 and found["fails"] is False
    assert release.status == "unchecked"


def test_reading_a_reference_keeps_memory_flat_per_batch(tmp_path):
    from annotation.task_types import get_task_type
    from datasets_build.references import ReadOutcome, reference_batches

    path = write_reference(tmp_path / "many.jsonl", planted_texts(25, 13), broken=True)
    outcome = ReadOutcome()
    batches = list(reference_batches(path, "jsonl", get_task_type("tc"), outcome, batch=10))
    assert [len(b.records) for b in batches] == [10, 10, 5]
    assert outcome.read == 26 and outcome.skipped == 1 and outcome.problems[0]["record"] == 2


@pytest.mark.django_db
def test_the_build_command_says_why_a_release_failed(make_project, tmp_path):
    """A maintainer at the terminal reads why, as the release page and the API say it: not just "failed"."""
    from io import StringIO

    project = make_project("tc")
    load_records(project, sample_records("tc", 60))
    call_command("build_release", project.slug, "--version", "1.0.0", "--splits", "0.6,0.2,0.2", "--seed", "1",
                 "--out", str(tmp_path), stdout=StringIO())
    out = StringIO()
    call_command("build_release", project.slug, "--version", "1.1.0", "--splits", "0.6,0.2,0.2", "--seed", "2",
                 "--out", str(tmp_path), stdout=out)
    release = Release.objects.get(project=project, version="1.1.0")
    assert release.status == "failed", release.status
    assert "failed: " in out.getvalue() and "contamination policy does not allow" in out.getvalue(), out.getvalue()
