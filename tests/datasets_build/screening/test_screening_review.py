"""The screening review: flagged spans highlighted in context with their type, keep/drop for the items ticked
on the page or for every item matching the filter (one audit event), and a queue of 10,000 flagged items that
pages and is decided in a bounded number of queries."""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

from annotation import services
from annotation.models import AuditEvent, Flag, FlagResolution, Item, ScreeningStatus
from datasets_build.screening.highlight import Span, item_spans, snippets
from tests.builders import client_for


def held(project, title: str, *, external_id: str, kind: str = "toxic", findings=None) -> Item:
    item = services.item_create(project=project, payload={"title": title}, external_id=external_id)
    item.screening_status = ScreeningStatus.NEEDS_REVIEW
    item.pii_findings = findings or []
    item.save(update_fields=["screening_status", "pii_findings"])
    Flag.objects.create(item=item, kind=kind, note=f"{kind} by the screener")
    return item


def test_snippets_mark_each_span_in_its_context():
    text = "가" * 100 + "죽어야 한다" + "나" * 100
    [snippet] = snippets(text, [Span(100, 106, "toxic", "threat")], context=5)
    assert [(p.text, p.span is not None) for p in snippet] == [
        ("…", False), ("가" * 5, False), ("죽어야 한다", True), ("나" * 5 + "…", False)]


def test_spans_of_pii_findings_and_screener_hits(make_project):
    project = make_project("tc", slug="spans")
    text, spans = item_spans(project.task, {"title": "박지영([전화번호1])에게: 이런 놈들은 다 죽어야 한다"},
                             [{"field": "title", "type": "phone", "start": 4, "end": 11, "action": "pseudonymized"}])
    assert [(text[s.start:s.end], s.kind, s.label) for s in spans] == [
        ("[전화번호1]", "pii", "phone"), ("죽어야 한다", "toxic", "threat")]


@pytest.mark.django_db
def test_the_review_page_highlights_the_flagged_span_with_its_type(make_project):
    project = make_project("tc", slug="highlight")
    held(project, "박지영([전화번호1])에게 전화했다", external_id="pii-1", kind="pii",
         findings=[{"field": "title", "type": "phone", "start": 4, "end": 11, "action": "pseudonymized"}])
    held(project, "이런 멍청한 놈들은 다 죽어야 한다", external_id="tox-1")
    page = client_for(project.created_by).get(reverse("datasets_build:project-review",
                                                      args=[project.pk])).content.decode()
    assert ('<mark class="hit hit-pii" title="phone number">[전화번호1]'
            '<span class="hit-type">phone number</span></mark>' in page)
    assert ('<mark class="hit hit-toxic" title="threat or call for violence">죽어야 한다'
            '<span class="hit-type">threat or call for violence</span></mark>' in page)
    korean = client_for(project.created_by).get(reverse("datasets_build:project-review", args=[project.pk]),
                                                HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert '<span class="hit-type">전화번호</span>' in korean
    assert '<span class="hit-type">위협·폭력 선동</span>' in korean
    filtered = client_for(project.created_by).get(reverse("datasets_build:project-review", args=[project.pk]),
                                                  {"kind": "pii"}).content.decode()
    assert "pii-1" in filtered and "tox-1" not in filtered


@pytest.mark.django_db
def test_keep_the_ticked_items_and_drop_all_matching_a_filter(make_project):
    project = make_project("tc", slug="bulk")
    manager = project.created_by
    toxic = [held(project, f"기사 {i}", external_id=f"t{i}") for i in range(3)]
    pii = held(project, "전화번호가 있는 기사", external_id="p1", kind="pii")
    url = reverse("datasets_build:project-review", args=[project.pk])
    client = client_for(manager)
    response = client.post(url, {"scope": "chosen", "items": [toxic[0].pk, toxic[1].pk], "decision": "keep",
                                 "reason": "뉴스 인용"})
    assert response.status_code == 302
    statuses = dict(Item.objects.filter(project=project).values_list("external_id", "screening_status"))
    assert statuses == {"t0": "kept", "t1": "kept", "t2": "needs_review", "p1": "needs_review"}
    assert Flag.objects.get(item=toxic[0]).resolution == FlagResolution.KEPT
    assert Flag.objects.get(item=toxic[0]).resolution_note == "뉴스 인용"
    # Dropping asks first: the first POST says how many items would go, in the reader's language, and changes
    # nothing; only the confirmation's POST drops them.
    drop = {"scope": "filter", "kind": "toxic", "decision": "drop", "reason": "욕설"}
    asked = client.post(url, drop, HTTP_ACCEPT_LANGUAGE="ko")
    page = asked.content.decode()
    assert asked.status_code == 200 and "항목 1개를 제외할까요?" in page and "되돌릴 수 없습니다" in page
    assert 'name="confirm" value="drop"' in page and "욕설" in page
    assert Item.objects.get(pk=toxic[2].pk).screening_status == "needs_review"
    assert not AuditEvent.objects.filter(project=project, action="bulk drop").exists()
    client.post(url, {**drop, "confirm": "drop"})
    statuses = dict(Item.objects.filter(project=project).values_list("external_id", "screening_status"))
    assert statuses == {"t0": "kept", "t1": "kept", "t2": "dropped", "p1": "needs_review"}
    assert Flag.objects.get(item=pii).resolution == FlagResolution.OPEN
    events = list(AuditEvent.objects.filter(project=project, object_type="screening").order_by("id"))
    assert [(e.action, e.after["items"], e.actor) for e in events] == [("bulk keep", 2, manager),
                                                                       ("bulk drop", 1, manager)]
    assert events[1].after["item_ids"] == [toxic[2].pk] and events[1].after["reason"] == "욕설"
    # Nothing ticked, no reason: refused, nothing changes.
    messages = [str(m) for m in client.post(url, {"scope": "chosen", "decision": "keep", "reason": "x"},
                                            follow=True).context["messages"]]
    assert any("Tick the items" in m for m in messages)
    client.post(url, {"scope": "filter", "decision": "keep", "reason": " "})
    assert Item.objects.get(pk=pii.pk).screening_status == "needs_review"


@pytest.mark.django_db
def test_ten_thousand_flagged_items_page_and_are_decided_in_a_few_queries(make_project, django_assert_max_num_queries):
    project = make_project("tc", slug="tenk")
    items = Item.objects.bulk_create(
        Item(project=project, payload={"title": f"기사 {i}"}, external_id=f"k{i}", content_hash=f"h{i}",
             screening_status=ScreeningStatus.NEEDS_REVIEW) for i in range(10_000))
    Flag.objects.bulk_create(Flag(item=item, kind="toxic" if i % 2 else "bias", note="screener")
                             for i, item in enumerate(items))
    url = reverse("datasets_build:project-review", args=[project.pk])
    client = client_for(project.created_by)
    started = time.perf_counter()
    with django_assert_max_num_queries(12):
        page = client.get(url, {"page": "200"})
    assert page.status_code == 200 and "k4975" in page.content.decode()
    assert time.perf_counter() - started < 5
    started = time.perf_counter()
    # Session, user, project, membership; then the ids, two UPDATEs and the audit event (and savepoints).
    with django_assert_max_num_queries(12):
        client.post(url, {"scope": "filter", "kind": "toxic", "decision": "drop", "reason": "욕설", "confirm": "drop"})
    assert time.perf_counter() - started < 10
    assert Item.objects.filter(project=project, screening_status="dropped").count() == 5_000
    assert Flag.objects.filter(item__project=project, resolution=FlagResolution.DROPPED).count() == 5_000
    assert Flag.objects.filter(item__project=project, resolution=FlagResolution.OPEN).count() == 5_000
    assert AuditEvent.objects.get(project=project, object_type="screening").after["items"] == 5_000
