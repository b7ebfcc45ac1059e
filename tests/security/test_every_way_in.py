"""Every way in is screened (issue 35, finding 3): an item created through the API, the admin (add and change) or
the item services gets what an import of the same record gets — its phone number, e-mail address and Korean name
(and those in its guid) pseudonymized under the project's policy, its findings recorded, its text screened for
toxicity, its flags raised and its screening status set — and a release built afterwards carries none of the raw
values, in any file or guid."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from annotation import services
from annotation.models import Flag, Item, Project, ScreeningStatus
from datasets_build.services import items_import
from tests.builders import build_release, client_for, write_jsonl

#: The raw values planted, and the project's policy: every PII type pseudonymized, names included.
NAME, PHONE, EMAIL = "김민준", "010-2345-6789", "minjun.kim@example.com"
RAW = (NAME, PHONE, EMAIL, "2345-6789", "minjun.kim")
POLICY = {"pii": {"person": "pseudonymize"}}


def planted(where: str) -> str:
    return f"{NAME} 기자가 {where}에서 {PHONE}로 연락하라고 했다, {EMAIL}"


def pii_project(make_project: Any, slug: str) -> Project:
    project = make_project("tc", k=1, slug=slug)
    project.options = {**project.options, **POLICY}
    project.save(update_fields=["options"])
    return project


def as_imported(make_project: Any, tmp_path: Path, records: dict[str, dict[str, Any]]) -> dict[str, Item]:
    """The same records imported into a project with the same policy: what every other way in must match."""
    project = pii_project(make_project, "imported")
    result = items_import(project, write_jsonl(tmp_path / "same.jsonl", list(records.values())), "jsonl")
    assert result.ok, result.errors
    return dict(zip(records, Item.objects.filter(project=project).order_by("pk"), strict=True))


def flags_of(item: Item) -> list[tuple[str, str]]:
    return sorted(Flag.objects.filter(item=item).values_list("kind", "note"))


def assert_screened_as_imported(item: Item, imported: Item) -> None:
    item.refresh_from_db()
    assert not any(raw in json.dumps([item.payload, item.external_id, item.meta], ensure_ascii=False) for raw in RAW)
    assert (item.payload, item.external_id, item.pii_findings, item.screening_status, flags_of(item)) == (
        imported.payload, imported.external_id, imported.pii_findings, imported.screening_status, flags_of(imported))
    if item.external_id != "api-threat":  # the one record without PII
        assert {(f["type"], f["action"]) for f in item.pii_findings} >= {
            ("person", "pseudonymized"), ("phone", "pseudonymized"), ("email", "pseudonymized")}


@pytest.mark.django_db
def test_every_write_path_screens_like_an_import_and_the_release_carries_no_raw_pii(
        make_project, make_user, api, annotator_in, tmp_path):
    project = pii_project(make_project, "every-way-in")
    manager = project.created_by
    admin = make_user("root")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    threat = "이런 놈들은 다 죽어야 한다"
    records = {
        "api": {"guid": f"api-{PHONE}", "title": planted("API")},
        "api-threat": {"guid": "api-threat", "title": threat},
        "admin-add": {"guid": f"admin-{EMAIL}", "title": planted("관리 화면")},
        "admin-change": {"guid": "admin-change", "title": planted("수정 화면")},
        "service": {"guid": f"service-{PHONE}", "title": planted("서비스")},
        "service-bulk": {"guid": "service-bulk", "title": planted("대량 서비스")},
    }
    imported = as_imported(make_project, tmp_path, records)

    # The API: POST /api/projects/{id}/items/ (the one API write of an item; it has no update).
    client = api(manager)
    created = {}
    for key in ("api", "api-threat"):
        response = client.post(f"/api/projects/{project.pk}/items/", {
            "payload": {"title": records[key]["title"]}, "external_id": records[key]["guid"]}, format="json")
        assert response.status_code == 201, response.data
        assert not any(raw in json.dumps(response.data, ensure_ascii=False) for raw in RAW)
        created[key] = Item.objects.get(pk=response.data["id"])
        assert client.patch(f"/api/projects/{project.pk}/items/{response.data['id']}/", {
            "payload": {"title": planted("수정")}}, format="json").status_code in (403, 405)
    again = client.post(f"/api/projects/{project.pk}/items/", {
        "payload": {"title": "다른 기사"}, "external_id": records["api"]["guid"]}, format="json")
    assert again.status_code == 409  # the same guid, named as stored: the conflict does not echo the raw value
    assert not any(raw in json.dumps(again.data, ensure_ascii=False) for raw in RAW)
    assert created["api-threat"].screening_status == ScreeningStatus.NEEDS_REVIEW
    assert [kind for kind, _ in flags_of(created["api-threat"])] == ["toxic"]

    # The admin: add, then change an item's text.
    browser = client_for(admin)
    response = browser.post(reverse("admin:annotation_item_add"), {
        "project": project.pk, "external_id": records["admin-add"]["guid"],
        "payload": json.dumps({"title": records["admin-add"]["title"]}, ensure_ascii=False), "meta": "{}",
        "group_key": "", "split": "", "source": ""})
    assert response.status_code == 302, response.content.decode()[:2000]
    created["admin-add"] = Item.objects.exclude(pk__in=[i.pk for i in created.values()]).get(project=project)
    plain = services.item_create(project=project, payload={"title": "수정하기 전의 평범한 기사 제목"},
                                 external_id="admin-change")
    response = browser.post(reverse("admin:annotation_item_change", args=[plain.pk]), {
        "external_id": "admin-change", "payload": json.dumps({"title": records["admin-change"]["title"]},
                                                             ensure_ascii=False),
        "meta": "{}", "group_key": "", "split": "", "source": ""})
    assert response.status_code == 302, response.content.decode()[:2000]
    created["admin-change"] = plain

    # The services, one item and in bulk.
    created["service"] = services.item_create(project=project, payload={"title": records["service"]["title"]},
                                              external_id=records["service"]["guid"])
    (created["service-bulk"],) = services.items_create(project=project, items=[{
        "payload": {"title": records["service-bulk"]["title"]}, "external_id": "service-bulk"}])

    for key, item in created.items():
        assert_screened_as_imported(item, imported[key])

    # The admin changing only the split leaves the screened content, its findings and its flags as they are.
    changed = created["admin-change"]
    changed.refresh_from_db()
    response = browser.post(reverse("admin:annotation_item_change", args=[changed.pk]), {
        "external_id": changed.external_id, "payload": json.dumps(changed.payload, ensure_ascii=False),
        "meta": json.dumps(changed.meta), "group_key": changed.group_key, "split": "dev", "source": ""})
    assert response.status_code == 302
    after = Item.objects.get(pk=changed.pk)
    assert (after.split, after.payload, after.pii_findings, flags_of(after)) == (
        "dev", changed.payload, changed.pii_findings, flags_of(changed))

    # A release built afterwards (every clear item labelled by an annotator) carries no raw value anywhere.
    annotator = annotator_in(project)
    while (assignment := services.assignment_next(project=project, user=annotator)) is not None:
        services.annotation_submit(project=project, user=annotator, item_id=assignment.item_id,
                                   payload={"label": "사회"})
    built = build_release(project, tmp_path / "releases", "--version", "1.0.0", "--format", "klue,jsonl,csv",
                          "--no-agreement")
    assert sum(built["splits"].values()) == 5  # every item but the one held for review
    folder = Path(built["out"])
    files = [path for path in folder.rglob("*") if path.is_file()]
    text = "\n".join(path.read_text(encoding="utf-8", errors="replace") for path in files)
    assert "기자가" in text and "[전화번호1]" in text  # the items are there, pseudonymized
    assert [raw for raw in RAW if raw in text] == []


@pytest.mark.django_db
def test_an_item_the_policy_refuses_is_not_created_and_the_error_names_the_field(make_project, api):
    project = pii_project(make_project, "refused")
    response = api(project.created_by).post(f"/api/projects/{project.pk}/items/", {
        "payload": {"title": ""}, "external_id": "empty"}, format="json")
    assert response.status_code == 400 and not Item.objects.filter(project=project).exists()
