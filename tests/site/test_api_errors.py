"""Service errors become HTTP responses in one place: the API's exception handler."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rest_framework.exceptions import NotFound

from annotation.api.exceptions import exception_handler
from annotation.assist import AssistError
from annotation.services import ServiceError
from annotation.task_types import PayloadError

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("code", "status"), [("conflict", 409), ("not_found", 404), ("guideline", 403),
                                              ("not_assigned", 400), ("invalid", 400), ("anything else", 400)])
def test_a_service_error_maps_to_its_status_and_body(code: str, status: int) -> None:
    response = exception_handler(ServiceError("no can do", code=code), {})
    assert response.status_code == status
    assert response.data == {"detail": "no can do", "code": code}
    with_field = exception_handler(ServiceError("bad", code=code, field="options.k"), {})
    assert with_field.data == {"detail": "bad", "code": code, "field": "options.k"}


def test_assist_and_payload_errors_and_the_rest() -> None:
    assist = exception_handler(AssistError("out of range", field="fraction"), {})
    assert (assist.status_code, assist.data) == (400, {"detail": "out of range", "code": "invalid",
                                                       "field": "fraction"})
    payload = exception_handler(PayloadError("entities[1].end", "past the text"), {})
    assert (payload.status_code, payload.data) == (400, {"payload": ["entities[1].end: past the text"],
                                                         "field": "entities[1].end"})
    assert exception_handler(NotFound("No such project."), {}).status_code == 404  # DRF's own handler
    assert exception_handler(KeyError("x"), {}) is None  # a bug stays a 500


def test_no_api_view_translates_service_errors_itself() -> None:
    modules = [*ROOT.glob("annotation/api/views*.py"), *ROOT.glob("*/api*.py")]
    assert len(modules) >= 6
    for module in modules:
        source = module.read_text(encoding="utf-8")
        assert not re.search(r"except\s+\(?[\w.]*(ServiceError|AssistError|PayloadError)", source), module.name
