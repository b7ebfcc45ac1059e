"""An item's provenance is one timeline: imported from which source, file and record; screened how; annotated by
which rater ids under which guideline version; gold decided how; released in which versions and splits (or left
out, and why). Through the API and the page (both languages), linked from the item page and the release diff;
managers and maintainers only, annotators named by rater id, never by account."""

from __future__ import annotations

import orjson
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Item
from tests.exports.release_history import records_of

pytestmark = pytest.mark.django_db


def kinds(events: list[dict]) -> list[str]:
    return [e["kind"] for e in events]


def test_a_relabelled_and_moved_item_through_the_api(history, api):
    project, ids = history["project"], history["ids"]
    client = api(history["manager"])
    relabelled = client.get(f"/api/projects/{project.pk}/items/{ids['relabelled']}/provenance/").data
    events = relabelled["events"]
    assert kinds(events)[:2] == ["imported", "screened"]
    annotated = [e for e in events if e["kind"] == "annotated"]
    # The corpus's three annotators, by the rater ids the releases gave them (r01…), never by account.
    assert len(annotated) == 3 and all(e["imported"] and e["rater"].startswith("r") for e in annotated)
    assert all("username" not in e and "annotator" not in e for e in annotated)
    adjudicated = [e for e in events if e["kind"] == "adjudicated"]
    assert adjudicated and adjudicated[0]["reason"] == "the headline is about a match"
    released = [(e["release"], e["kind"], e.get("split")) for e in events if e["kind"] in ("released", "left_out")]
    assert released == [("1.0.0", "released", "train"), ("1.1.0", "released", "train")]
    assert events[0]["source"] is None or events[0]["source"]["name"]

    moved = client.get(f"/api/projects/{project.pk}/items/{ids['moved']}/provenance/").data
    assert [(e["release"], e.get("split")) for e in moved["events"] if e["kind"] == "released"] == [
        ("1.0.0", "train"), ("1.1.0", "dev")]
    screened = client.get(f"/api/projects/{project.pk}/items/{ids['screened']}/provenance/").data
    assert [(e["release"], e["kind"], e.get("reason")) for e in screened["events"]
            if e["kind"] in ("released", "left_out")] == [("1.0.0", "released", None),
                                                         ("1.1.0", "left_out", "screening_needs_review")]
    flagged = client.get(f"/api/projects/{project.pk}/items/{ids['flagged']}/provenance/").data
    assert [(e["flag"], e["by_screener"], e["resolution"]) for e in flagged["events"] if e["kind"] == "flagged"] == [
        ("pii", False, "open")]


def test_only_managers_and_maintainers_reach_it(history, api):
    project, item = history["project"], history["ids"]["relabelled"]
    url = f"/api/projects/{project.pk}/items/{item}/provenance/"
    assert api(history["maintainer"]).get(url).status_code == 200
    assert api(history["annotator"]).get(url).status_code == 403
    assert api(None).get(url).status_code in (401, 403)
    assert api(history["manager"]).get(f"/api/projects/{project.pk}/items/999999/provenance/").status_code == 404


def test_the_page_in_both_languages_and_the_links_to_it(history, client):
    project, ids = history["project"], history["ids"]
    client.force_login(history["manager"])
    url = f"/projects/{project.pk}/items/{ids['moved']}/provenance/"
    rater = '<code lang="zxx">r'
    for language, words in (("en", ["Provenance of item", "Release 1.0.0", "Annotated", f"by rater {rater}"]),
                            ("ko", ["이력: 항목", "배포 1.0.0", "주석함", f"주석자: {rater}"])):
        page = client.get(url, HTTP_ACCEPT_LANGUAGE=language).content.decode()
        for word in words:
            assert word in page, (language, word)
    item_page = client.get(f"/projects/{project.pk}/agreement/items/{ids['moved']}/").content.decode()
    assert f'<a class="item-link" href="{url}">' in item_page
    diff = client.get(f"/projects/{project.pk}/releases/{history['v2'].pk}/diff/?against={history['v1'].pk}")
    assert f'href="{url}"' in diff.content.decode()


def test_an_imported_item_names_its_file_and_record(make_project, api, django_capture_on_commit_callbacks, media):
    project = make_project("tc")
    client = api(project.created_by)
    lines = list(records_of([f"가져온 {n}번째 제목입니다 아주 길게" for n in range(5)], "imp"))
    lines[2] = dict(lines[0])  # an exact duplicate: skipped, so the items after it come from one record later
    content = b"\n".join(orjson.dumps(r) for r in lines) + b"\n"
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/projects/{project.pk}/imports/", {
            "file": SimpleUploadedFile("corpus.jsonl", content), "format": "jsonl", "source": "news",
            "license": "CC-BY-SA-4.0"}, format="multipart")
    assert response.status_code == 202, response.data
    items = list(Item.objects.filter(project=project).order_by("id"))
    assert [i.external_id for i in items] == ["imp-v1_dev_00000", "imp-v1_dev_00001", "imp-v1_dev_00003",
                                              "imp-v1_dev_00004"]
    records = []
    for item in items:
        events = client.get(f"/api/projects/{project.pk}/items/{item.pk}/provenance/").data["events"]
        imported = events[0]
        assert imported["kind"] == "imported" and imported["source"] == {"name": "news", "license": "CC-BY-SA-4.0"}
        assert imported["file"]["file_name"] == "corpus.jsonl"
        records.append(imported["file"]["record"])
    assert records == [1, 2, 4, 5]
