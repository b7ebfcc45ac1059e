"""The release diff (every kind of change, through the command, the API and the page) and the changelog a
release ships (CHANGES.md and changes.jsonl, in SHA256SUMS and the manifest, the same bytes when rebuilt)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from exports import services
from exports.card import CARD_NAME
from exports.diff import CHANGES_JSONL, CHANGES_MD
from exports.integrity import read_sums, verify_folder
from exports.models import Release, ReleaseItems
from tests.exports.release_history import build_kept, expected_changes

pytestmark = pytest.mark.django_db








def _as_expected(changes: dict[str, list[dict]]) -> dict[str, dict[int, object]]:
    return {
        "added": {r["item"]: r["before"] for r in changes["added"]},
        "dropped": {r["item"]: r["reason"] for r in changes["dropped"]},
        "relabelled": {r["item"]: (r["old"], r["new"]) for r in changes["relabelled"]},
        "moved": {r["item"]: (r["from"], r["to"]) for r in changes["moved"]},
        "text_changed": {r["item"]: r["split"] for r in changes["text_changed"]},
    }


def test_every_release_records_what_it_held(history):
    held = ReleaseItems.objects.get(release=history["v1"]).unpacked()
    assert len(held["ids"]) == 29 and history["ids"]["readmitted"] not in held["ids"].tolist()
    row = ReleaseItems.objects.get(release=history["v2"])
    assert row.reason_names and set(row.reason_names) == {"screening_needs_review", "open_flag", "gold_discarded"}
    assert len(row.unpacked()["excluded_ids"]) == 3


def test_command_reports_every_kind_of_change(history):
    out = io.StringIO()
    call_command("release_diff", history["project"].slug, "1.0.0", "1.1.0", "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert _as_expected(result["changes"]) == expected_changes(history)
    assert result["counts"] == {"added": 3, "dropped": 4, "relabelled": 1, "moved": 1, "text_changed": 1}
    why = result["changes"]["relabelled"][0]["why"]
    assert why["how"] == "adjudication" and why["by"] == history["manager"].username
    assert why["reason"] == "the headline is about a match" and why["at"]
    deleted = next(r for r in result["changes"]["dropped"] if r["reason"] == "deleted")
    assert deleted["exists"] is False
    # The label distribution per split, from both releases' counts.
    before, after = history["v1"].label_counts, Release.objects.get(pk=history["v2"].pk).label_counts
    for split, labels in result["label_distribution"].items():
        for label, n in labels.items():
            a, b = before.get(split, {}).get(label, 0), after.get(split, {}).get(label, 0)
            assert n == {"a": a, "b": b, "change": b - a}, (split, label)
    total_change = sum(n["change"] for labels in result["label_distribution"].values() for n in labels.values())
    assert total_change == len(result["changes"]["added"]) - len(result["changes"]["dropped"])

    text = io.StringIO()
    call_command("release_diff", str(history["project"].pk), "1.0.0", "1.1.0", "--kind", "moved", stdout=text)
    lines = text.getvalue().splitlines()
    assert lines[0].startswith("1.0.0 → 1.1.0: 3 added, 4 dropped, 1 relabelled, 1 moved, 1 text_changed")
    assert [line.split("\t")[0] for line in lines[1:] if "\t" in line] == ["moved"]
    assert "train → dev" in lines[1]


def test_command_refuses_bad_input_with_one_line(history):
    slug = history["project"].slug
    with pytest.raises(CommandError, match=r"^no project 'nope' \(give its slug or id\)$"):
        call_command("release_diff", "nope", "1.0.0", "1.1.0")
    with pytest.raises(CommandError, match=r"has no release 9.9.9 \(its releases: 1.0.0, 1.1.0\)"):
        call_command("release_diff", slug, "1.0.0", "9.9.9")
    ReleaseItems.objects.filter(release=history["v1"]).delete()
    with pytest.raises(CommandError, match=r"release 1\.0\.0 has no record of its items"):
        call_command("release_diff", slug, "1.0.0", "1.1.0")


def test_reverse_diff_swaps_added_and_dropped(history):
    out = io.StringIO()
    call_command("release_diff", history["project"].slug, "1.1.0", "1.0.0", "--json", stdout=out)
    result = json.loads(out.getvalue())
    ids = history["ids"]
    assert {r["item"]: r["reason"] for r in result["changes"]["dropped"]} == {
        ids["added"][0]: "absent", ids["added"][1]: "absent", ids["readmitted"]: "screening_needs_review"}
    assert {r["item"] for r in result["changes"]["added"]} == {
        ids["screened"], ids["flagged"], ids["discarded"], ids["deleted"]}
    assert {r["item"]: (r["from"], r["to"]) for r in result["changes"]["moved"]} == {ids["moved"]: ("dev", "train")}


def test_api_diff_by_kind_and_roles(history, api):
    project, v1, v2 = history["project"], history["v1"], history["v2"]
    url = f"/api/projects/{project.pk}/releases/{v1.pk}/diff/{v2.pk}/"
    response = api(history["maintainer"]).get(url)
    assert response.status_code == 200
    assert _as_expected(response.data["changes"]) == expected_changes(history)
    dropped = api(history["manager"]).get(url, {"kind": "dropped"})
    assert dropped.status_code == 200 and list(dropped.data["changes"]) == ["dropped"]
    assert {r["item"]: r["reason"] for r in dropped.data["changes"]["dropped"]} == expected_changes(history)["dropped"]
    bad = api(history["manager"]).get(url, {"kind": "renamed"})
    assert bad.status_code == 400 and bad.data["field"] == "kind"
    ReleaseItems.objects.filter(release=v1).delete()
    assert api(history["manager"]).get(url).status_code == 409
    assert api(history["annotator"]).get(url).status_code == 403


@pytest.mark.parametrize("language", ["en", "ko"])
def test_page_lists_changes_filtered_by_kind(history, client, language):
    project, v1, v2 = history["project"], history["v1"], history["v2"]
    client.force_login(history["manager"])
    url = f"/projects/{project.pk}/releases/{v2.pk}/diff/"
    headers = {"HTTP_ACCEPT_LANGUAGE": language}
    page = client.get(url, **headers).content.decode()  # against the previous version by default
    ids = history["ids"]
    for kind, items in expected_changes(history).items():
        for item in items:
            assert f'class="change-{kind}" data-item="{item}"' in page, (kind, item)
    # Each existing item links to its history; the deleted one is named by its number only.
    assert f'/projects/{project.pk}/agreement/items/{ids["relabelled"]}/' in page
    assert f'/projects/{project.pk}/agreement/items/{ids["deleted"]}/' not in page
    assert history["manager"].username in page and "the headline is about a match" in page
    words = {"en": ["Changes from release 1.0.0 to release 1.1.0", "flagged (an open flag)",
                    "gold discarded by the gold rule", "deleted from the project", "adjudicated by"],
             "ko": ["1.0.0 배포에서 1.1.0 배포까지의 변경", "판정"]}
    for word in words[language]:
        assert word in page, word
    only = client.get(url, {"against": v1.pk, "kind": "dropped"}, **headers).content.decode()
    assert 'class="change-dropped"' in only and 'class="change-added"' not in only
    assert 'class="change-moved"' not in only
    detail = client.get(f"/projects/{project.pk}/releases/{v2.pk}/", **headers).content.decode()
    assert url in detail
    ReleaseItems.objects.filter(release=v1).delete()
    refused = client.get(url, **headers).content.decode()
    assert 'id="diff-error"' in refused and 'class="change-' not in refused
    assert ("cannot be compared" if language == "en" else "비교할 수 없습니다") in refused
    client.force_login(history["annotator"])
    assert client.get(url).status_code == 403


def _folder(release: Release) -> Path:
    return Path(Release.objects.get(pk=release.pk).out_dir)


def test_changelog_in_the_release(history):
    first, second = _folder(history["v1"]), _folder(history["v2"])
    assert not (first / CHANGES_MD).exists() and not (first / CHANGES_JSONL).exists()
    sums = read_sums(second)
    assert {CHANGES_MD, CHANGES_JSONL} <= set(sums)
    manifest = json.loads((second / "manifest.json").read_text())
    assert {CHANGES_MD, CHANGES_JSONL} <= {f["path"] for f in manifest["files"]}
    assert manifest["changes"] == {"previous": "1.0.0", "files": [CHANGES_MD, CHANGES_JSONL],
                                   "counts": {"added": 3, "dropped": 4, "relabelled": 1, "moved": 1,
                                              "text_changed": 1}}
    assert verify_folder(second)["ok"]
    card = (second / CARD_NAME).read_text()
    assert "| `CHANGES.md` | Changelog |" in card and "| `changes.jsonl` | Changelog |" in card
    # The card summarises the changelog.
    assert ("### Changes since 1.0.0\n\nadded 3, dropped 4, relabelled 1, moved 1, text changed 1. `CHANGES.md` "
            "lists them") in card

    lines = [json.loads(line) for line in (second / CHANGES_JSONL).read_text().splitlines()]
    ids = history["ids"]
    by_item = {line["item"]: line for line in lines}
    assert [line["item"] for line in lines] == sorted(by_item)
    assert by_item[ids["deleted"]] == {"item": ids["deleted"], "guid": None, "changes": ["dropped"],
                                       "reason": "deleted"}
    assert by_item[ids["flagged"]]["reason"] == "open_flag"
    assert by_item[ids["relabelled"]]["changes"] == ["relabelled"]
    assert by_item[ids["relabelled"]]["guid"] == "s-v1_dev_00004"
    assert by_item[ids["moved"]]["changes"] == ["moved"]
    # Ids and kinds only: no text, no label, no person.
    raw = (second / CHANGES_JSONL).read_text()
    assert "제목" not in raw and history["new_label"] not in raw and history["manager"].username not in raw

    md = (second / CHANGES_MD).read_text()
    assert md.startswith("# Changes in 1.1.0 since 1.0.0\n")
    assert "| Dropped | 4 |" in md and "s-v1_dev_00004 (train): " in md and "s-v1_dev_00005: train → dev" in md
    assert "제목" not in md and history["manager"].username not in md


def test_rebuilding_the_release_gives_the_same_changelog(history):
    second = _folder(history["v2"])
    before = {name: (second / name).read_bytes() for name in (CHANGES_MD, CHANGES_JSONL)}
    sums = read_sums(second)
    services.release_delete(release=history["v2"], by=history["manager"])
    again = _folder(build_kept(history["project"], "1.1.0", history["out"]))
    assert {name: (again / name).read_bytes() for name in before} == before
    rebuilt = read_sums(again)
    assert {name: rebuilt[name] for name in before} == {name: sums[name] for name in before}


def test_admin_shows_what_a_release_held(history, client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", password="pw-goldset-123"))
    page = client.get(f"/admin/exports/releaseitems/{history['v2'].pk}/change/")
    assert page.status_code == 200
    text = page.content.decode()
    # 1.0.0 held 29 of the 30 items; 1.1.0 drops 4 and adds 3, and leaves out 3 that still exist.
    assert "open_flag" in text and '<div class="readonly">28</div>' in text
    assert '<div class="readonly">3</div>' in text
    assert client.get("/admin/exports/releaseitems/").status_code == 200
