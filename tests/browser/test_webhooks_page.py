"""The Webhooks tab in a Korean browser: a manager registers an endpoint (the secret shown once), sees a delivery
that failed at the receiver on 127.0.0.1, and replays it with the page's button."""

from __future__ import annotations

from typing import Any

import pytest

from annotation.models import WebhookDelivery, WebhookEndpoint
from annotation.webhooks import services as webhooks
from tests.annotation.webhook_receiver import running_receiver

from .conftest import SCREENSHOTS, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("locale", ["ko-KR"])
def test_a_manager_registers_an_endpoint_and_replays_a_failed_delivery(page: Any, seed, settings) -> None:
    settings.GOLDSET_WEBHOOKS_ALLOW_PRIVATE = True
    seeded = seed("tc")
    path = f"/projects/{seeded.project.pk}/webhooks/"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with running_receiver() as receiver:
        sign_in(page, seeded.project.created_by.username, path)
        assert page.locator("nav.tabs a.active").inner_text().strip() == "웹훅"
        page.get_by_label("엔드포인트 URL").fill(receiver.url)
        page.get_by_label("배포 생성 완료").check()
        page.get_by_role("button", name="엔드포인트 추가").click()
        secret = page.locator(".webhook-secret-value").inner_text()
        endpoint = WebhookEndpoint.objects.get()
        assert secret == endpoint.secret and endpoint.events == ["release.built"]
        page.screenshot(path=str(SCREENSHOTS / "webhooks-registered-ko.png"), full_page=True)

        receiver.secret = secret
        receiver.statuses = [503] * webhooks.MAX_ATTEMPTS
        webhooks.emit(seeded.project, "release.built", {"release": 3, "version": "1.0.0", "status": "failed"})
        page.goto(path)
        assert secret not in page.content()
        row = page.locator(".webhook-deliveries tbody tr").first
        assert "실패" in row.inner_text() and "HTTP 503" in row.inner_text()
        assert page.locator(".webhook-endpoints tbody tr").first.locator("a.error").inner_text() == "1"
        page.screenshot(path=str(SCREENSHOTS / "webhooks-failed-ko.png"), full_page=True)

        row.get_by_role("button", name="다시 보내기").click()
        page.wait_for_url(f"**{path}")
        assert "전송됨" in page.locator(".webhook-deliveries tbody tr").first.inner_text()
        assert WebhookDelivery.objects.get().status == "succeeded"
        assert len(receiver.received) == webhooks.MAX_ATTEMPTS + 1 and all(r["verified"] for r in receiver.received)

        # The same page in English.
        page.locator(".lang-switch button[value=en]").click()
        page.wait_for_url(f"**{path}")
        assert "Delivered" in page.locator(".webhook-deliveries tbody tr").first.inner_text()
        assert page.locator("nav.tabs a.active").inner_text().strip() == "Webhooks"
        page.screenshot(path=str(SCREENSHOTS / "webhooks-en.png"), full_page=True)
