"""Webhooks through a live Celery worker on the PostgreSQL test database (skips without one): the worker imports
the upload, and its delivery task POSTs the signed event to the receiver on 127.0.0.1 after the import commits."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import WebhookDelivery
from tests.annotation.webhook_receiver import running_receiver

pytestmark = [pytest.mark.worker, pytest.mark.postgres]


@pytest.mark.django_db(transaction=True)
def test_the_worker_delivers_the_import_event_signed(live_worker, api, make_project, settings, tmp_path) -> None:
    settings.MEDIA_ROOT = tmp_path  # the stored path is absolute, so the worker reads it from here
    settings.GOLDSET_WEBHOOKS_ALLOW_PRIVATE = True
    project = make_project("tc")
    client = api(project.created_by)
    lines = "".join(json.dumps({"guid": f"h-{i}", "title": f"웹훅 기사 제목 {i}번", "label": "사회"},
                               ensure_ascii=False) + "\n" for i in range(30))
    with running_receiver() as receiver:
        created = client.post(f"/api/projects/{project.pk}/webhooks/",
                              {"url": receiver.url, "events": ["import.finished"]}, format="json")
        assert created.status_code == 201, created.data
        receiver.secret = created.data["secret"]
        response = client.post(f"/api/projects/{project.pk}/imports/", {
            "file": SimpleUploadedFile("h.jsonl", lines.encode("utf-8")), "format": "jsonl"}, format="multipart")
        assert response.status_code == 202
        delivery: Any = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            delivery = WebhookDelivery.objects.filter(endpoint_id=created.data["id"], status="succeeded").first()
            if delivery is not None:
                break
            time.sleep(0.5)
        assert delivery is not None, "the worker delivered nothing within 120 s"
    (request,) = receiver.received
    assert request["verified"]
    event = json.loads(request["body"])
    assert event["event"] == "import.finished" and event["data"]["import"] == response.data["id"]
    assert event["data"]["items_written"] == 30
    assert [(a.status_code, a.ok) for a in delivery.attempts.all()] == [(200, True)]
