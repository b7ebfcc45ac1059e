"""Issue 35, finding 5: the README's deployment (``DJANGO_ENV=production``, gunicorn bound directly) trusts no
forwarded header until the proxies in front are counted, and ``check --deploy`` warns when the proxy settings
disagree. See docs/security.md, "Behind a reverse proxy"."""

from __future__ import annotations

import io
import os
from unittest import mock

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import override_settings
from django.urls import reverse
from rest_framework.test import APIClient

from tests.builders import production_settings

PASSWORD = "pw-goldset-123"
ATTACKER, VICTIM = "203.0.113.66", "198.51.100.23"
#: What decides whose failures count where, as production sets it.
_LOCKOUT = ("GOLDSET_TRUSTED_PROXY_COUNT", "SECURE_PROXY_SSL_HEADER", "AXES_FAILURE_LIMIT", "AXES_COOLOFF_TIME",
            "AXES_LOCKOUT_PARAMETERS", "AXES_CLIENT_IP_CALLABLE", "AXES_RESET_ON_SUCCESS")


@pytest.fixture
def production_lockout() -> object:
    """The production settings' lockout configuration (the README's environment: no proxy count given), with
    axes on and no earlier attempt."""
    from axes.models import AccessAttempt

    prod = production_settings()
    with override_settings(AXES_ENABLED=True, **{name: getattr(prod, name, None) for name in _LOCKOUT}):
        AccessAttempt.objects.all().delete()
        yield prod


def _login(client: APIClient, username: str, password: str) -> int:
    return client.post(reverse("annotation:login"), {"username": username, "password": password}).status_code


def test_production_trusts_no_forwarded_header_until_the_proxies_are_counted() -> None:
    prod = production_settings()
    assert prod.GOLDSET_TRUSTED_PROXY_COUNT == 0
    assert getattr(prod, "SECURE_PROXY_SSL_HEADER", None) is None
    with mock.patch.dict(os.environ, {"GOLDSET_TRUSTED_PROXY_COUNT": "1"}):
        behind_nginx = production_settings()
    assert behind_nginx.GOLDSET_TRUSTED_PROXY_COUNT == 1
    assert behind_nginx.SECURE_PROXY_SSL_HEADER == ("HTTP_X_FORWARDED_PROTO", "https")


@pytest.mark.django_db
def test_thirty_wrong_passwords_with_a_forged_address_each_still_lock_out(production_lockout, make_user) -> None:
    user = make_user("victim")
    statuses = []
    for n in range(30):
        # gunicorn reached directly: each attempt claims another client address.
        attacker = APIClient(REMOTE_ADDR=ATTACKER, HTTP_X_FORWARDED_FOR=f"192.0.2.{n + 1}")
        statuses.append(_login(attacker, user.username, "wrong"))
    limit = production_lockout.AXES_FAILURE_LIMIT
    assert statuses[:limit - 1] == [200] * (limit - 1)
    assert set(statuses[limit - 1:]) == {429}
    # Locked: even the right password is refused from the attacker's address, whatever it forges.
    forging = APIClient(REMOTE_ADDR=ATTACKER, HTTP_X_FORWARDED_FOR="192.0.2.250")
    assert _login(forging, user.username, PASSWORD) == 429


@pytest.mark.django_db
def test_a_forged_victim_address_does_not_lock_the_victim_out(production_lockout, make_user) -> None:
    user = make_user("victim")
    attacker = APIClient(REMOTE_ADDR=ATTACKER, HTTP_X_FORWARDED_FOR=VICTIM)
    assert [_login(attacker, user.username, "wrong") for _ in range(30)][-1] == 429
    assert _login(APIClient(REMOTE_ADDR=VICTIM), user.username, PASSWORD) == 302
    token = APIClient(REMOTE_ADDR=VICTIM).post(reverse("api:api-token"), {"username": user.username,
                                                                          "password": PASSWORD}, format="json")
    assert token.status_code == 200 and token.data["token"]


def _deploy_check() -> str:
    """``manage.py check --deploy --fail-level WARNING`` as CI runs it: the messages, or "" when clean."""
    try:
        call_command("check", deploy=True, fail_level="WARNING", tags=["security"], stdout=io.StringIO())
    except SystemCheckError as error:
        return str(error)
    return ""


@pytest.mark.parametrize(("overrides", "code"), [
    ({"GOLDSET_TRUSTED_PROXY_COUNT": 0, "SECURE_PROXY_SSL_HEADER": ("HTTP_X_FORWARDED_PROTO", "https")},
     "goldset.W001"),
    ({"GOLDSET_TRUSTED_PROXY_COUNT": 0, "USE_X_FORWARDED_HOST": True}, "goldset.W002"),
    ({"GOLDSET_TRUSTED_PROXY_COUNT": 1, "SECURE_PROXY_SSL_HEADER": None}, "goldset.W003"),
    ({"GOLDSET_TRUSTED_PROXY_COUNT": -1}, "goldset.E001"),
])
def test_check_deploy_warns_when_the_proxy_settings_disagree(overrides, code) -> None:
    prod = production_settings()
    secure = {name: getattr(prod, name) for name in dir(prod) if name.startswith(("SECURE_", "SESSION_COOKIE_",
                                                                                   "CSRF_COOKIE_"))}
    with override_settings(DEBUG=False, SECRET_KEY=prod.SECRET_KEY + "-Zq9" * 10, ALLOWED_HOSTS=prod.ALLOWED_HOSTS,
                           **secure):
        assert "goldset." not in _deploy_check()
        with override_settings(**overrides):
            assert code in _deploy_check()
    with mock.patch.dict(os.environ, {"GOLDSET_TRUSTED_PROXY_COUNT": "1"}):
        behind_nginx = production_settings()
    with override_settings(GOLDSET_TRUSTED_PROXY_COUNT=1, SECURE_PROXY_SSL_HEADER=behind_nginx.SECURE_PROXY_SSL_HEADER):
        assert "goldset." not in _deploy_check()
