"""403, 404 and 500 pages: in the reader's language, inside the site's frame (navigation kept), saying what to do
next; JSON under /api/; the 500 page rendered without touching the database."""

from __future__ import annotations

import pytest
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils import translation
from django.utils.functional import SimpleLazyObject

from annotation.models import Role
from config.errors import server_error
from tests.builders import client_for

NAV = '<nav><a href="/">'


def _korean(client: Client) -> Client:
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "ko"
    return client


@pytest.mark.django_db
def test_a_missing_page_in_korean_is_a_korean_404_with_the_navigation(make_user):
    client = _korean(client_for(make_user("lost")))
    response = client.get("/projects/999999/")
    page = response.content.decode()
    assert response.status_code == 404
    assert '<html lang="ko">' in page and NAV in page and "lost" in page  # the signed-in frame
    assert "페이지를 찾을 수 없습니다" in page and 'href="/"' in page and "관리자" in page
    assert "Not Found" not in page and "Page not found" not in page
    english = client_for(make_user("lost-en")).get("/no/such/page/").content.decode()
    assert "Page not found" in english and "Go to your projects" in english and NAV in english


@pytest.mark.django_db
def test_a_forbidden_page_is_a_localized_403_saying_what_to_do(make_project, make_user, add_member):
    project = make_project("tc")
    annotator = add_member(project, make_user("curious"), Role.ANNOTATOR)
    url = reverse("annotation:review-dashboard", args=[project.pk])
    korean = _korean(client_for(annotator)).get(url)
    page = korean.content.decode()
    assert korean.status_code == 403 and '<html lang="ko">' in page and NAV in page
    assert "이 페이지를 열 수 없습니다" in page and "다른 사용자로 로그인" in page
    assert f'href="/accounts/login/?next=/projects/{project.pk}/agreement/"' in page
    assert "403 Forbidden" not in page
    english = client_for(annotator).get(url).content.decode()
    assert "You may not open this page" in english and "Sign in as another user" in english
    assert "curious" in english


@pytest.mark.django_db
def test_api_errors_stay_json(make_user, api):
    user = make_user("api-user")
    missing = api(user).get("/api/no-such-endpoint/")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    inside = api(user).get("/api/projects/999999/")  # DRF's own handler, untouched
    assert inside.status_code == 404 and set(inside.json()) == {"detail"}


@pytest.mark.django_db
@pytest.mark.urls("tests.site.error_urls")
def test_500_is_a_korean_page_and_json_under_the_api(make_user):
    client = _korean(client_for(make_user("unlucky")))
    client.raise_request_exception = False
    response = client.get("/broken/")
    page = response.content.decode()
    assert response.status_code == 500 and '<html lang="ko">' in page and NAV in page
    assert "문제가 발생했습니다" in page and "Server Error" not in page
    api = client.get("/api/broken/")
    assert api.status_code == 500 and api.json()["code"] == "server_error"


def test_the_500_page_reads_nothing_from_the_database():
    """The 500 page must render when the database is what failed: it never reads the user or the session. The
    test has no database (pytest-django blocks every query), so one query would fail it."""
    def no_user() -> None:
        raise AssertionError("the 500 page read the user")

    request = RequestFactory().get("/projects/1/")
    request.user = SimpleLazyObject(no_user)
    with translation.override("ko"):
        response = server_error(request)
    assert response.status_code == 500
    assert "문제가 발생했습니다" in response.content.decode()


@pytest.mark.django_db
def test_a_form_from_an_expired_page_says_to_reload_in_korean(make_user):
    client = _korean(Client(enforce_csrf_checks=True))
    client.force_login(make_user("stale"))
    response = client.post("/preferences/shortcuts/", {"single_keys": "off"})
    page = response.content.decode()
    assert response.status_code == 403 and '<html lang="ko">' in page and NAV in page
    assert "양식이 만료되었습니다" in page and "CSRF" not in page
