"""Webhooks end to end: managers register endpoints through the API and the page, the services of imports,
releases and agreement reports emit their events, a Celery task POSTs them signed to a receiver on 127.0.0.1
(allowed by GOLDSET_WEBHOOKS_ALLOW_PRIVATE) that checks the signature, failures are retried with backoff,
recorded, shown and replayed, and private addresses are refused without the allowance."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation import services, tasks
from annotation.gold import services as gold_services
from annotation.models import Item, Role, WebhookAttempt, WebhookDelivery, WebhookEndpoint
from annotation.webhooks import services as webhooks
from tests.annotation.webhook_receiver import Receiver, running_receiver
from tests.builders import client_for, jsonl, load_records, sample_records

pytestmark = pytest.mark.django_db
DEMO = Path(__file__).resolve().parents[2] / "demo" / "corpus"


@pytest.fixture
def receiver(settings: Any) -> Iterator[Receiver]:
    settings.GOLDSET_WEBHOOKS_ALLOW_PRIVATE = True
    with running_receiver() as found:
        yield found


def register(api: Any, project: Any, receiver: Receiver, events: list[str]) -> dict[str, Any]:
    response = api(project.created_by).post(f"/api/projects/{project.pk}/webhooks/",
                                            {"url": receiver.url, "events": events}, format="json")
    assert response.status_code == 201, response.data
    receiver.secret = response.data["secret"]
    return response.data


def no_text(body: bytes) -> None:
    """Ids and figures only: no Hangul (every item text, label and name in these projects has some)."""
    text = body.decode()
    assert not any("\uac00" <= ch <= "\ud7a3" for ch in text), text


def test_the_secret_is_shown_once_and_private_addresses_are_refused_without_the_allowance(
        api, make_project, settings) -> None:
    project = make_project("tc")
    client = api(project.created_by)
    base = f"/api/projects/{project.pk}/webhooks/"
    settings.GOLDSET_WEBHOOKS_ALLOW_PRIVATE = False
    for url in ("https://127.0.0.1/hook", "https://localhost:8443/hook", "https://10.1.2.3/hook",
                "https://169.254.169.254/latest/meta-data", "https://[::1]/hook", "https://192.168.0.7/hook"):
        refused = client.post(base, {"url": url, "events": ["release.built"]}, format="json")
        assert refused.status_code == 400, (url, refused.data)
        assert refused.data["field"] == "url" and "loopback, link-local, private" in refused.data["detail"], url
    plain = client.post(base, {"url": "http://93.184.215.14/hook", "events": ["release.built"]}, format="json")
    assert plain.status_code == 400 and "https://" in plain.data["detail"]
    unknown = client.post(base, {"url": "https://93.184.215.14/hook", "events": ["item.deleted"]}, format="json")
    assert unknown.status_code == 400 and "events" in unknown.data
    assert not WebhookEndpoint.objects.exists()

    created = client.post(base, {"url": "https://93.184.215.14/hook", "events": ["release.built"]}, format="json")
    assert created.status_code == 201 and len(created.data["secret"]) == 64
    listed = client.get(base).data["results"]
    assert [e["url"] for e in listed] == ["https://93.184.215.14/hook"] and "secret" not in listed[0]
    assert client.delete(f"{base}{created.data['id']}/").status_code == 204
    assert not WebhookEndpoint.objects.exists()


def test_imports_tell_the_receiver_signed_with_counts_only(api, make_project, receiver, media,
                                                          django_capture_on_commit_callbacks) -> None:
    project = make_project("tc")
    register(api, project, receiver, ["import.finished", "import.failed"])
    client = api(project.created_by)
    for name, content in (("tc.jsonl", (DEMO / "tc.jsonl").read_bytes()),
                          ("bad.jsonl", jsonl({"guid": "a", "title": "좋은 제목"}, {"guid": "b"}))):
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(f"/api/projects/{project.pk}/imports/", {
                "file": SimpleUploadedFile(name, content), "format": "jsonl", "source": "goldset-demo",
                "license": "CC-BY-SA-4.0"}, format="multipart")
        assert response.status_code == 202, response.data
    assert [r["verified"] for r in receiver.received] == [True, True]
    finished, failed = receiver.events()
    assert finished["event"] == "import.finished" and finished["project"] == project.pk
    assert finished["data"]["items_written"] == 40 and finished["data"]["status"] == "succeeded"
    assert failed["event"] == "import.failed" and failed["data"]["errors"] == 1 and failed["data"]["items_written"] == 0
    assert receiver.received[0]["headers"]["X-Goldset-Event"] == "import.finished"
    for request in receiver.received:
        no_text(request["body"])
    # Every attempt is recorded, with the receiver's answer.
    deliveries = client.get(f"/api/projects/{project.pk}/webhooks/deliveries/").data["results"]
    assert [d["status"] for d in deliveries] == ["succeeded", "succeeded"]
    assert all(d["attempts"][0]["status_code"] == 200 and d["attempts"][0]["ok"] for d in deliveries)


def test_releases_tell_their_build_status_and_publication(api, make_project, make_user, add_member, receiver,
                                                           release_root, django_capture_on_commit_callbacks) -> None:
    manager = make_user(can_create=True)
    project = make_project("tc", manager=manager)
    load_records(project, sample_records("tc", 200))
    maintainer = add_member(project, make_user(), Role.MAINTAINER)
    register(api, project, receiver, ["release.built", "release.published"])
    base = f"/api/projects/{project.pk}/releases/"
    with django_capture_on_commit_callbacks(execute=True):
        built = api(manager).post(base, {"version": "1.0.0", "splits": "0.8,0.1,0.1", "seed": 9,
                                         "formats": ["klue", "jsonl"]}, format="json")
    assert built.status_code == 202, built.data
    with django_capture_on_commit_callbacks(execute=True):
        assert api(maintainer).post(f"{base}{built.data['id']}/publish/").status_code == 200
    assert all(r["verified"] for r in receiver.received)
    events = receiver.events()
    assert [(e["event"], e["data"]["status"]) for e in events] == [("release.built", "passed"),
                                                                    ("release.published", "published")]
    assert events[0]["data"] == {"release": built.data["id"], "version": "1.0.0", "status": "passed"}
    no_text(receiver.received[1]["body"])


def test_an_agreement_report_tells_its_figures(api, make_project, receiver,
                                               django_capture_on_commit_callbacks) -> None:
    project = make_project("tc")
    load_records(project, sample_records("tc", 20))
    register(api, project, receiver, ["agreement.ready"])
    with django_capture_on_commit_callbacks(execute=True):
        assert api(project.created_by).get(f"/api/projects/{project.pk}/agreement/").status_code == 202
    (event,) = receiver.events()
    assert receiver.received[0]["verified"] and event["event"] == "agreement.ready"
    assert set(event["data"]) == {"report", "annotations_counted", "items_counted", "annotators", "measure",
                                  "value"}
    no_text(receiver.received[0]["body"])


def test_failures_are_retried_with_backoff_shown_and_replayed(api, make_project, receiver, monkeypatch,
                                                              django_capture_on_commit_callbacks) -> None:
    project = make_project("tc")
    register(api, project, receiver, ["release.built"])
    receiver.statuses = [500] * webhooks.MAX_ATTEMPTS
    waits: list[int] = []
    queue_next = tasks.webhook_deliver.apply_async

    def recorded(*args: Any, **kwargs: Any) -> Any:
        if "countdown" in kwargs:  # a retry (the first attempt is queued without one)
            waits.append(kwargs["countdown"])
        return queue_next(*args, **kwargs)

    monkeypatch.setattr(tasks.webhook_deliver, "apply_async", recorded)
    with django_capture_on_commit_callbacks(execute=True):
        (delivery,) = webhooks.emit(project, "release.built", {"release": 7, "version": "1.0.0", "status": "failed"})
    assert waits == [30, 60, 120, 240, 480]
    delivery.refresh_from_db()
    assert delivery.status == "failed" and len(receiver.received) == webhooks.MAX_ATTEMPTS
    assert [a.status_code for a in delivery.attempts.all()] == [500] * webhooks.MAX_ATTEMPTS
    assert all(a.error == "HTTP 500" and not a.ok for a in delivery.attempts.all())

    # The page shows the failure, in Korean; its button replays the delivery, which now gets through.
    page = client_for(project.created_by)
    shown = page.get(f"/projects/{project.pk}/webhooks/?status=failed", HTTP_ACCEPT_LANGUAGE="ko")
    html = shown.content.decode()
    assert shown.status_code == 200 and "실패" in html and "HTTP 500" in html
    assert WebhookEndpoint.objects.get().url in html
    with django_capture_on_commit_callbacks(execute=True):
        replayed = page.post(f"/projects/{project.pk}/webhooks/", {"action": "replay", "delivery": delivery.pk})
    assert replayed.status_code == 302
    delivery.refresh_from_db()
    assert delivery.status == "succeeded" and delivery.attempts.count() == webhooks.MAX_ATTEMPTS + 1
    # The same delivery id on every attempt, so receivers can drop duplicates; each signed afresh.
    assert {r["headers"]["X-Goldset-Delivery"] for r in receiver.received} == {str(delivery.pk)}
    assert all(r["verified"] for r in receiver.received)

    # Replay through the API too.
    with django_capture_on_commit_callbacks(execute=True):
        again = api(project.created_by).post(f"/api/projects/{project.pk}/webhooks/deliveries/{delivery.pk}/replay/")
    assert again.status_code == 202
    assert WebhookAttempt.objects.filter(delivery=delivery).count() == webhooks.MAX_ATTEMPTS + 2


def test_the_address_is_checked_again_at_delivery(api, make_project, monkeypatch, settings,
                                                  django_capture_on_commit_callbacks) -> None:
    """DNS rebinding: a name that resolved to a public address at registration and to loopback at delivery."""
    settings.GOLDSET_WEBHOOKS_ALLOW_PRIVATE = False
    project = make_project("tc")
    resolved = {"address": "93.184.215.14"}
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, port, **kw: [
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", (resolved["address"], port))])
    created = api(project.created_by).post(f"/api/projects/{project.pk}/webhooks/", {
        "url": "https://hooks.example.org/goldset", "events": ["release.built"]}, format="json")
    assert created.status_code == 201, created.data
    resolved["address"] = "127.0.0.1"
    with django_capture_on_commit_callbacks(execute=True):
        webhooks.emit(project, "release.built", {"release": 1, "version": "1.0.0", "status": "passed"})
    delivery = WebhookDelivery.objects.get()
    attempts = list(delivery.attempts.all())
    assert delivery.status == "failed" and len(attempts) == webhooks.MAX_ATTEMPTS
    assert all(a.status_code is None and "127.0.0.1" in a.error for a in attempts)


def test_managers_register_an_endpoint_on_the_page_and_see_the_secret_once(make_project, receiver) -> None:
    project = make_project("tc")
    page = client_for(project.created_by)
    url = f"/projects/{project.pk}/webhooks/"
    shown = page.post(url, {"action": "create", "url": receiver.url, "events": ["release.built", "import.failed"]},
                      HTTP_ACCEPT_LANGUAGE="ko")
    endpoint = WebhookEndpoint.objects.get()
    html = shown.content.decode()
    assert shown.status_code == 200 and endpoint.secret in html and "한 번만" in html
    assert endpoint.events == ["import.failed", "release.built"]
    later = page.get(url, HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert endpoint.secret not in later and "배포 생성 완료" in later
    # Removing takes two steps: the first POST only asks, saying what is lost for good.
    asked = page.post(url, {"action": "delete", "endpoint": endpoint.pk}, HTTP_ACCEPT_LANGUAGE="ko")
    assert asked.status_code == 200 and WebhookEndpoint.objects.filter(pk=endpoint.pk).exists()
    card = asked.content.decode().split('id="delete-confirm"')[1].split("</section>")[0]
    assert "이 웹훅 엔드포인트를 삭제할까요?" in card and "삭제는 되돌릴 수 없습니다." in card
    assert receiver.url in card and "전송 기록 0건" in card and 'name="confirm" value="delete"' in card
    assert endpoint.secret not in asked.content.decode()
    assert page.post(url, {"action": "delete", "endpoint": endpoint.pk, "confirm": "delete"}).status_code == 302
    assert not WebhookEndpoint.objects.exists()


def test_the_payloads_are_documented_in_the_openapi_schema(client) -> None:
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    assert schema["openapi"].startswith("3.1")
    assert set(schema["webhooks"]) == {"import.finished", "import.failed", "release.built", "release.published",
                                       "agreement.ready", "adjudication.queue_above"}
    body = schema["webhooks"]["release.built"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    envelope = schema["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]
    assert set(envelope["properties"]) == {"id", "event", "project", "created", "data"}
    data = schema["components"]["schemas"][envelope["properties"]["data"]["$ref"].rsplit("/", 1)[1]]
    assert set(data["properties"]) == {"release", "version", "status"}
    assert "X-Goldset-Signature" in schema["webhooks"]["release.built"]["post"]["description"]


def _disagreement(project: Any, annotator_in: Any, labels: tuple[str, str]) -> int:
    """Two new annotators label the queue's next item differently; its id."""
    taken = set()
    for label in labels:
        annotator = annotator_in(project)
        services.guideline_acknowledge(user=annotator, project=project)
        item_id = services.assignment_next(project=project, user=annotator).item_id
        services.annotation_submit(project=project, user=annotator, item_id=item_id, payload={"label": label})
        taken.add(item_id)
    (item_id,) = taken
    return item_id


def test_the_adjudication_queue_is_told_once_per_rise_above_the_threshold(
        api, make_project, annotator_in, receiver, django_capture_on_commit_callbacks) -> None:
    project = make_project("tc", k=2)
    for i in range(3):
        services.item_create(project=project, payload={"title": f"기사 제목 {i}"}, external_id=f"a-{i}")
    client = api(project.created_by)
    base = f"/api/projects/{project.pk}/webhooks/"
    missing = client.post(base, {"url": receiver.url, "events": ["adjudication.queue_above"]}, format="json")
    assert missing.status_code == 400 and missing.data["field"] == "adjudication_threshold"
    created = client.post(base, {"url": receiver.url, "events": ["adjudication.queue_above"],
                                 "adjudication_threshold": 1}, format="json")
    assert created.status_code == 201 and created.data["adjudication_threshold"] == 1
    receiver.secret = created.data["secret"]

    def compute() -> None:
        with django_capture_on_commit_callbacks(execute=True):
            assert client.post(f"/api/projects/{project.pk}/gold/").status_code == 200

    first = _disagreement(project, annotator_in, ("정치", "경제"))
    compute()  # one item waits: not above 1
    assert receiver.received == []
    _disagreement(project, annotator_in, ("사회", "생활문화"))
    compute()  # two wait: above, told
    compute()  # still above: not told again
    assert [e["data"] for e in receiver.events()] == [{"waiting": 2, "threshold": 1}]
    assert receiver.received[0]["verified"] and receiver.events()[0]["event"] == "adjudication.queue_above"
    gold_services.adjudicate(item=Item.objects.get(pk=first), by=project.created_by, reason="제목이 경제 기사",
                             payload={"label": "경제"})
    compute()  # back to one: re-armed
    _disagreement(project, annotator_in, ("세계", "IT과학"))
    compute()
    assert [e["data"]["waiting"] for e in receiver.events()] == [2, 2]


def test_the_admin_lists_endpoints_without_their_secret(make_project, make_user) -> None:
    project = make_project("tc")
    endpoint = webhooks.endpoint_create(project=project, url="https://93.184.215.14/hook", events=["release.built"],
                                        by=project.created_by)
    root = make_user(is_staff=True, is_superuser=True)
    page = client_for(root).get(f"/admin/annotation/webhookendpoint/{endpoint.pk}/change/")
    assert page.status_code == 200 and endpoint.url in page.content.decode()
    assert endpoint.secret not in page.content.decode()


def test_an_attempt_connects_to_the_address_it_checked(receiver, make_project, monkeypatch,
                                                       django_capture_on_commit_callbacks) -> None:
    """The check's lookup is the one used: a later lookup (here an unroutable address) is never made."""
    project = make_project("tc")
    port = receiver.server.server_port
    answers = iter(["127.0.0.1"] * 2)  # registration's check, then the attempt's

    def lookup(host: str, port: int, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        address = host if host[0].isdigit() else next(answers, "10.255.255.1")  # an address resolves to itself
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    endpoint = webhooks.endpoint_create(project=project, url=f"http://hooks.example.test:{port}/goldset",
                                        events=["release.built"], by=project.created_by)
    receiver.secret = endpoint.secret
    with django_capture_on_commit_callbacks(execute=True):
        (delivery,) = webhooks.emit(project, "release.built", {"release": 1, "version": "1.0.0", "status": "passed"})
    delivery.refresh_from_db()
    assert delivery.status == "succeeded" and receiver.received[0]["verified"]
    assert receiver.received[0]["headers"]["Host"] == f"hooks.example.test:{port}"
