"""Login rate limiting, Content Security Policy, password hashing and production cookie settings."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.contrib.auth.hashers import get_hasher
from django.test import override_settings
from django.urls import reverse
from rest_framework.test import APIClient

from tests.builders import production_settings
from tests.conftest import ROOT

PASSWORD = "pw-goldset-123"


@pytest.fixture
def axes_on(settings) -> None:
    """Lockouts counted even if the environment turned axes off for the rest of the suite."""
    from axes.models import AccessAttempt

    settings.AXES_ENABLED = True
    AccessAttempt.objects.all().delete()


def _page_login(client, username: str, password: str):
    return client.post(reverse("annotation:login"), {"username": username, "password": password})


@pytest.mark.django_db
def test_page_login_locks_out_after_five_failures(axes_on, client, make_user) -> None:
    user = make_user("victim")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _page_login(client, user.username, "wrong").status_code == 200  # form re-shown with an error
    assert _page_login(client, user.username, "wrong").status_code == 429
    # Locked out: even the right password is refused, and no session is created.
    response = _page_login(client, user.username, PASSWORD)
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_lockout_is_per_username_and_address(axes_on, client, make_user) -> None:
    victim, other = make_user("victim"), make_user("bystander")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _page_login(client, victim.username, "wrong")
    # Another account from the same address still signs in.
    assert _page_login(client, other.username, PASSWORD).status_code == 302
    # The same account from another address too.
    elsewhere = type(client)(REMOTE_ADDR="10.9.8.7")
    assert elsewhere.post(reverse("annotation:login"), {"username": victim.username,
                                                        "password": PASSWORD}).status_code == 302


@pytest.mark.django_db
def test_lockout_ends_after_the_cool_off(axes_on, client, make_user) -> None:
    from datetime import timedelta

    from axes.models import AccessAttempt
    from django.utils import timezone

    user = make_user("victim")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _page_login(client, user.username, "wrong")
    assert timedelta(minutes=15) == settings.AXES_COOLOFF_TIME
    assert _page_login(client, user.username, PASSWORD).status_code == 429
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert _page_login(client, user.username, PASSWORD).status_code == 302


@pytest.mark.django_db
def test_token_endpoint_failures_count_and_lock_out(axes_on, make_user) -> None:
    from axes.models import AccessAttempt

    user = make_user("victim")
    client = APIClient()
    url = reverse("api:api-token")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        response = client.post(url, {"username": user.username, "password": "wrong"}, format="json")
        assert response.status_code in {400, 429}
        assert "token" not in (response.data if hasattr(response, "data") else {})
    assert AccessAttempt.objects.get(username=user.username).failures_since_start == settings.AXES_FAILURE_LIMIT
    response = client.post(url, {"username": user.username, "password": PASSWORD}, format="json")
    assert response.status_code in {400, 429}
    assert b"token" not in response.content
    # Failures on the token endpoint lock the login page too: it is the same account and address.
    assert APIClient().post(reverse("annotation:login"), {"username": user.username,
                                                          "password": PASSWORD}).status_code == 429


@pytest.mark.django_db
def test_token_endpoint_still_works_below_the_limit(axes_on, make_user) -> None:
    user = make_user("victim")
    client = APIClient()
    client.post(reverse("api:api-token"), {"username": user.username, "password": "wrong"}, format="json")
    response = client.post(reverse("api:api-token"), {"username": user.username, "password": PASSWORD}, format="json")
    assert response.status_code == 200 and response.data["token"]


@pytest.mark.django_db
def test_server_side_authenticate_without_request_is_not_broken(axes_on, make_user) -> None:
    from django.contrib.auth import authenticate

    user = make_user("victim")
    assert authenticate(username=user.username, password=PASSWORD) == user


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["login", "home"])
def test_csp_header_on_pages(client, make_user, name: str) -> None:
    if name == "home":
        client.force_login(make_user())
    response = client.get(reverse(f"annotation:{name}"))
    assert response.status_code == 200
    policy = response["Content-Security-Policy"]
    directives = {part.split()[0]: part.split()[1:] for part in policy.split(";") if part.strip()}
    assert directives["default-src"] == ["'self'"]
    assert directives["script-src"] == ["'self'"] or directives["script-src"][0] == "'self'"
    assert "'unsafe-inline'" not in directives["script-src"] and "'unsafe-eval'" not in directives["script-src"]
    assert directives["frame-ancestors"] == ["'none'"]
    assert directives["object-src"] == ["'none'"]


@pytest.mark.django_db
def test_csp_header_on_project_pages(client, make_project) -> None:
    project = make_project("tc")
    client.force_login(project.created_by)
    for name in ("project-detail", "project-guideline", "project-members", "project-items"):
        response = client.get(reverse(f"annotation:{name}", args=[project.pk]))
        assert response.status_code == 200, name
        assert "default-src 'self'" in response["Content-Security-Policy"], name


def test_argon2_is_the_default_hasher() -> None:
    # conftest swaps in a fast hasher for the suite; the configured list is in the settings module.
    module = importlib.import_module("config.settings")
    assert module.PASSWORD_HASHERS[0] == "django.contrib.auth.hashers.Argon2PasswordHasher"
    with override_settings(PASSWORD_HASHERS=module.PASSWORD_HASHERS):
        hasher = get_hasher("default")
        assert hasher.algorithm == "argon2"
        assert hasher.encode("secret", hasher.salt()).startswith("argon2$argon2id$")


def test_production_cookie_and_transport_settings() -> None:
    prod = production_settings()
    assert prod.DEBUG is False
    assert prod.SESSION_COOKIE_SECURE and prod.CSRF_COOKIE_SECURE
    assert prod.SESSION_COOKIE_HTTPONLY
    assert prod.SESSION_COOKIE_SAMESITE == "Lax" and prod.CSRF_COOKIE_SAMESITE == "Lax"
    assert prod.SECURE_SSL_REDIRECT and prod.SECURE_HSTS_SECONDS >= 31536000
    assert prod.X_FRAME_OPTIONS == "DENY"


@pytest.mark.django_db
def test_production_cookies_are_sent_secure(client, make_user) -> None:
    prod = production_settings()
    names = ("SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SESSION_COOKIE_HTTPONLY", "SESSION_COOKIE_SAMESITE",
             "CSRF_COOKIE_SAMESITE")
    user = make_user("victim")
    with override_settings(**{name: getattr(prod, name) for name in names}):
        page = client.get(reverse("annotation:login"))
        csrf = page.cookies["csrftoken"]
        assert csrf["secure"] and csrf["samesite"] == "Lax"
        response = _page_login(client, user.username, PASSWORD)
        assert response.status_code == 302
        session = response.cookies["sessionid"]
        assert session["secure"] and session["httponly"] and session["samesite"] == "Lax"


def test_check_deploy_is_clean_in_production() -> None:
    env = {**os.environ, "DJANGO_ENV": "production", "SECRET_KEY": "k" * 60 + "-Zq9", "ALLOWED_HOSTS": "x.org"}
    # Test-only switches set by other tests (Playwright sets DJANGO_ALLOW_ASYNC_UNSAFE) are not deployment.
    for name in ("DATABASE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE", "DEBUG"):
        env.pop(name, None)
    result = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
