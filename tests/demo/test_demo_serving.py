"""The demo is served as users meet Goldset, not as a developer's console: DEBUG off, so a missing page is
Goldset's own 404 in the reader's language, with the static files still served."""

from __future__ import annotations

import warnings

import pytest
from django.core.management import call_command
from django.test import Client

from demo.management.commands import demo

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_demo_serves_without_debug_and_its_404_is_goldsets_own(monkeypatch, tmp_path, settings):
    settings.DEBUG = True  # the embedded default's development setting, under which the demo runs
    seen = {}

    def fake_call_command(name, *args, **kwargs):
        if name != "runserver":
            return call_command(name, *args, **kwargs)
        client = Client(HTTP_ACCEPT_LANGUAGE="ko")
        client.login(username="manager", password=demo.PASSWORD)
        with warnings.catch_warnings(record=True) as caught:  # the middleware is set up by the first request
            warnings.simplefilter("always")
            missing = client.get("/projects/99999/")
        seen["warnings"] = [str(w.message) for w in caught]
        seen.update(debug=settings.DEBUG, status=missing.status_code, page=missing.content.decode(),
                    css=client.get("/static/annotation/goldset.css").status_code)
        return None

    monkeypatch.setattr(demo, "call_command", fake_call_command)
    call_command("demo", "--tasks", "tc", "--out", str(tmp_path))
    assert seen["debug"] is False and seen["status"] == 404
    assert "페이지를 찾을 수 없습니다" in seen["page"] and "Using the URLconf" not in seen["page"]
    assert seen["css"] == 200
    # Served from the apps: no warning about a collected-static folder the demo never makes.
    assert not [w for w in seen["warnings"] if "No directory at" in w], seen["warnings"]
    assert settings.DEBUG is True  # the development setting is back once the server stops
