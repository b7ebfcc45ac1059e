"""A release recomputes the gold only when something it is computed from changed since the last computation
(``annotation.models.GoldState``, PostgreSQL): every change made through the API after a release — a new
submission, an edited annotation, a gold-rule setting, an adjudication, a flag and its resolution — is in the
next release's gold, and a release after no change computes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.gold import services as gold_services
from annotation.models import GoldLabel, GoldState, Item
from tests.conftest import is_postgres

pytestmark = [pytest.mark.django_db, pytest.mark.postgres,
              pytest.mark.skipif(not is_postgres(), reason="needs DATABASE_URL pointing at PostgreSQL")]

LABELS = ["IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"]
N = 40


@pytest.fixture
def team(make_project, annotator_in, api, media, release_root, django_capture_on_commit_callbacks):
    """A tc project of three annotations an item (the corpus label and two annotators' answers) whose corpus
    came with its labels through the import API."""
    project = make_project("tc", k=3)
    lines = "".join(json.dumps({"guid": f"g-{i:03d}", "title": f"{i}번째 기사 제목 {LABELS[i % 7]} 소식",
                                "label": LABELS[i % 7]}, ensure_ascii=False) + "\n" for i in range(N))
    with django_capture_on_commit_callbacks(execute=True):
        response = api(project.created_by).post(f"/api/projects/{project.pk}/imports/", {
            "file": SimpleUploadedFile("g.jsonl", lines.encode("utf-8")), "format": "jsonl", "pii": "off"},
            format="multipart")
    assert response.status_code == 202, response.data
    return {"project": project, "manager": project.created_by, "ann": [annotator_in(project), annotator_in(project)]}


def _release(api: Callable, team: dict[str, Any], version: str, capture: Callable) -> dict[str, str]:
    """Build a JSONL release through the API; the label of each released record by its guid."""
    project, manager = team["project"], team["manager"]
    base = f"/api/projects/{project.pk}/releases/"
    with capture(execute=True):
        response = api(manager).post(base, {"version": version, "formats": ["jsonl"]}, format="json")
    assert response.status_code == 202, response.data
    release = api(manager).get(f"{base}{response.data['id']}/").data
    assert release["status"] not in ("error", "building"), release["error"]
    labels = {}
    for file in api(manager).get(f"{base}{release['id']}/files/").data:
        if file["path"].startswith("jsonl/"):  # the data files (not the changelog, changes.jsonl)
            body = b"".join(api(manager).get(f"{base}{release['id']}/files/{file['id']}/").streaming_content)
            labels.update((r["guid"], r["label"]) for r in map(json.loads, body.splitlines()))
    return labels


def _annotate(api: Callable, team: dict[str, Any], who: int, label: str | None = None,
              item_id: int | None = None) -> int:
    """Annotator ``who`` answers ``label`` on ``item_id`` (else on the queue's next item), skipping what the
    queue offers before it; without a label nothing is answered. Returns the item's id."""
    client = api(team["ann"][who])
    base = f"/api/projects/{team['project'].pk}/"
    for _ in range(N + 1):
        offered = client.get(base + "next/").data
        if item_id in (None, offered["item"]["id"]):
            break
        client.post(base + f"assignments/{offered['assignment']}/skip/", {"reason": "다른 항목"}, format="json")
    if label is not None:
        response = client.post(base + "annotations/", {"item": offered["item"]["id"], "payload": {"label": label}},
                               format="json")
        assert response.status_code in (200, 201), response.data
    return offered["item"]["id"]


def _edit(api: Callable, team: dict[str, Any], who: int, label: str, item_id: int) -> None:
    """Annotator ``who`` changes their answer on ``item_id`` (submitted already) to ``label``."""
    response = api(team["ann"][who]).post(f"/api/projects/{team['project'].pk}/annotations/",
                                          {"item": item_id, "payload": {"label": label}}, format="json")
    assert response.status_code == 200, response.data


def _guid(item_id: int) -> str:
    return Item.objects.get(pk=item_id).external_id


def _other(*labels: str) -> str:
    return next(label for label in LABELS if label not in labels)


def _gold(guid: str) -> GoldLabel:
    return GoldLabel.objects.get(item__external_id=guid)


def test_a_labelled_import_computes_the_gold_and_a_release_after_no_change_computes_nothing(
        team, api, django_capture_on_commit_callbacks, monkeypatch):
    project = team["project"]
    assert GoldLabel.objects.filter(item__project=project).count() == N
    assert GoldState.objects.filter(project=project).exists()
    computed = []
    decide_all = gold_services._decide_all
    monkeypatch.setattr(gold_services, "_decide_all", lambda *a: computed.append(1) or decide_all(*a))

    first = _release(api, team, "1.0.0", django_capture_on_commit_callbacks)
    assert first == {f"g-{i:03d}": LABELS[i % 7] for i in range(N)} and computed == []
    assert _release(api, team, "1.0.1", django_capture_on_commit_callbacks) == first and computed == []
    # The gold recomputed on request (the API's POST) leaves it current as well.
    assert api(team["manager"]).post(f"/api/projects/{project.pk}/gold/").status_code == 200
    assert _release(api, team, "1.0.2", django_capture_on_commit_callbacks) == first and computed == [1]


def test_every_change_after_a_release_is_in_the_next_releases_gold(team, api, django_capture_on_commit_callbacks):
    project, manager = team["project"], team["manager"]
    base = f"/api/projects/{project.pk}/"
    release = iter(f"1.0.{n}" for n in range(20))

    def build() -> dict[str, str]:
        return _release(api, team, next(release), django_capture_on_commit_callbacks)

    before = build()

    # New submissions: two annotators outvote the corpus label.
    a_id = _annotate(api, team, 0)
    a = _guid(a_id)
    first = _other(before[a])
    _annotate(api, team, 0, first, a_id)
    _annotate(api, team, 1, first, a_id)
    released = build()
    assert released[a] == first and {k: v for k, v in released.items() if k != a} == {
        k: v for k, v in before.items() if k != a}
    assert _gold(a).status == "resolved" and _gold(a).payload == {"label": first}

    # An edited annotation: a three-way tie, which needs a person; the item leaves the release.
    _edit(api, team, 1, _other(before[a], first), a_id)
    assert a not in build()
    assert _gold(a).status == "needs_adjudication"

    # An adjudication decides it.
    gold = _gold(a)
    decided = api(manager).post(f"{base}gold/{a_id}/adjudicate/", {
        "payload": {"label": before[a]}, "reason": "지침 3.2", "version": gold.version}, format="json")
    assert decided.status_code == 200, decided.data
    assert build()[a] == before[a] and _gold(a).status == "adjudicated"

    # A gold-rule setting: three votes needed, which the two agreeing annotators of b no longer reach.
    b_id = _annotate(api, team, 1)
    b = _guid(b_id)
    second = _other(before[b])
    _annotate(api, team, 1, second, b_id)
    _annotate(api, team, 0, second, b_id)
    assert build()[b] == second
    changed = api(manager).patch(base, {"options": {"gold_min_votes": 3}}, format="json")
    assert changed.status_code == 200, changed.data
    assert b not in build()
    assert _gold(b).status == "needs_adjudication"
    assert build()[a] == before[a]  # the adjudication stays

    # A flag takes its item out of the gold; kept on review, the item comes back.
    c_id = Item.objects.filter(project=project).exclude(pk__in=[a_id, b_id]).order_by("id").first().pk
    c = _guid(c_id)
    flag = api(team["ann"][0]).post(f"{base}flags/", {"item": c_id, "kind": "pii", "note": "전화번호"}, format="json")
    assert flag.status_code == 201, flag.data
    assert c not in build()
    assert _gold(c).status == "excluded"
    resolved = api(manager).post(f"{base}flags/{flag.data['id']}/resolve/", {"resolution": "kept", "note": "괜찮음"},
                                 format="json")
    assert resolved.status_code == 200, resolved.data
    assert build()[c] == before[c]
    assert _gold(c).status == "incomplete"

    # A known answer set, then cleared: its item's gold is the rule's again.
    known = api(manager).post(f"{base}gold/{c_id}/known/", {"payload": {"label": _other(before[c])}}, format="json")
    assert known.status_code in (200, 201), known.data
    assert build()[c] == _other(before[c])
    assert api(manager).delete(f"{base}gold/{c_id}/known/").status_code in (200, 204)
    assert build()[c] == before[c] and _gold(c).status == "incomplete"


def test_a_gold_rule_failing_in_the_import_leaves_the_gold_to_the_release(make_project, api, media, release_root,
                                                                         django_capture_on_commit_callbacks,
                                                                         monkeypatch):
    from datasets_build import services as import_services

    def broken(project: Any) -> None:
        GoldState.objects.create(project=project, fingerprint="half done")  # the savepoint takes it back
        raise ValueError("a rule that cannot decide")

    monkeypatch.setattr(import_services, "gold_compute", broken)
    project = make_project("tc", k=3)
    lines = "".join(json.dumps({"guid": f"f-{i}", "title": f"{i}번째 기사 제목", "label": LABELS[i % 7]},
                               ensure_ascii=False) + "\n" for i in range(5))
    with django_capture_on_commit_callbacks(execute=True):
        response = api(project.created_by).post(f"/api/projects/{project.pk}/imports/", {
            "file": SimpleUploadedFile("f.jsonl", lines.encode("utf-8")), "format": "jsonl", "pii": "off"},
            format="multipart")
    job = api(project.created_by).get(f"/api/projects/{project.pk}/imports/{response.data['id']}/").data
    assert job["status"] == "succeeded", job
    assert Item.objects.filter(project=project).count() == 5 and not GoldState.objects.filter(project=project).exists()
    monkeypatch.undo()
    team = {"project": project, "manager": project.created_by}
    assert _release(api, team, "1.0.0", django_capture_on_commit_callbacks) == {
        f"f-{i}": LABELS[i % 7] for i in range(5)}
    assert GoldLabel.objects.filter(item__project=project).count() == 5
