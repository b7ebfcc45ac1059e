"""/api/docs/ renders Swagger UI under the app's Content Security Policy (no inline script or style): the
operations of the schema are listed, and no CSP violation reaches the console (the page fixture fails on one)."""

from __future__ import annotations

import pytest

from .conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_swagger_ui_lists_the_operations_under_the_csp(page, django_user_model) -> None:
    django_user_model.objects.create_user("reader", password=PASSWORD)
    page.goto("/accounts/login/")
    page.locator("[name=username]").fill("reader")
    page.locator("[name=password]").fill(PASSWORD)
    page.locator("[name=password]").press("Enter")
    page.wait_for_url("**/")
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    response = page.goto("/api/docs/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    page.wait_for_selector(".opblock-summary-path", timeout=30_000)
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert "/api/projects/" in [p.strip().replace("\u200b", "") for p in paths]
    assert page.locator(".opblock").count() >= 20
    assert "Goldset API" in page.locator(".info .title").inner_text()
    assert violations == []
