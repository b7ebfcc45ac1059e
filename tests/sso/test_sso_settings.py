"""Single sign-on's configuration without a provider: off by default, local accounts turned off, a callback this
browser never started, and the checks ``manage.py check`` (and ``--deploy``) make of the settings."""

from __future__ import annotations

import logging
import re

import pytest
from axes.models import AccessAttempt
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Role
from config import oidc
from tests.site.visible_text import offending_text

PASSWORD = "pw-goldset-123"


@pytest.fixture
def sso_on(settings) -> None:
    settings.GOLDSET_OIDC_CLIENT_ID = "goldset"
    settings.GOLDSET_OIDC_CLIENT_SECRET = "s3cret"
    settings.GOLDSET_OIDC_ISSUER = "https://id.example.org/realms/lab"


@pytest.mark.django_db
def test_sso_is_off_by_default_and_nothing_of_it_answers(client) -> None:
    page = client.get(reverse("annotation:login"))
    assert b"sso-start" not in page.content and b'name="password"' in page.content
    assert client.get(reverse("annotation:sso-start")).status_code == 404
    assert client.get(reverse("annotation:sso-callback"), {"code": "c", "state": "s"}).status_code == 404


@pytest.mark.django_db
def test_turning_local_accounts_off_refuses_every_password_login(sso_on, settings, client, make_user) -> None:
    user = make_user("local")
    settings.GOLDSET_LOCAL_LOGIN = False
    page = client.get(reverse("annotation:login"))
    assert b"sso-start" in page.content and b'name="password"' not in page.content
    refused = client.post(reverse("annotation:login"), {"username": user.username, "password": PASSWORD})
    assert refused.status_code == 200 and "_auth_user_id" not in client.session
    token = APIClient().post(reverse("api:api-token"), {"username": user.username, "password": PASSWORD},
                             format="json")
    assert token.status_code == 400 and "token" not in token.json()
    # On again: the same password signs in.
    settings.GOLDSET_LOCAL_LOGIN = True
    assert client.post(reverse("annotation:login"), {"username": user.username,
                                                      "password": PASSWORD}).status_code == 302


@pytest.mark.django_db
def test_without_sso_local_accounts_cannot_be_turned_off(settings, client, make_user) -> None:
    user = make_user("local")
    settings.GOLDSET_LOCAL_LOGIN = False
    assert client.post(reverse("annotation:login"), {"username": user.username,
                                                      "password": PASSWORD}).status_code == 302
    with pytest.raises(SystemCheckError, match=r"goldset\.W010"):
        call_command("check", fail_level="WARNING")


@pytest.mark.django_db
def test_a_callback_this_browser_never_started_is_refused_recorded_and_explained(sso_on, settings, client,
                                                                                 caplog) -> None:
    settings.AXES_ENABLED = True
    AccessAttempt.objects.all().delete()
    with caplog.at_level(logging.WARNING, logger="goldset.security"):
        response = client.get(reverse("annotation:sso-callback"), {"code": "stolen-code", "state": "forged"},
                              follow=True)
    assert response.redirect_chain[-1][0] == reverse("annotation:login")
    assert "could not be verified" in response.content.decode()
    assert "single sign-on refused (state)" in caplog.text
    attempt = AccessAttempt.objects.get()
    assert "stolen-code" not in attempt.get_data  # the one-time code is masked in the record
    ko = client.get(reverse("annotation:sso-callback"), {"error": "access_denied"}, follow=True,
                    headers={"accept-language": "ko"})
    assert "ID 공급자에서 로그인이 취소되어" in ko.content.decode()
    assert AccessAttempt.objects.get().failures_since_start == 2


def test_role_rules_parse_and_name_what_is_wrong() -> None:
    rules = oidc.role_rules("groups:lab-annotators=ynat/annotator; roles : lead = ynat / manager", list(Role.values))
    assert [(r.claim, r.value, r.project_slug, r.role) for r in rules] == [
        ("groups", "lab-annotators", "ynat", "annotator"), ("roles", "lead", "ynat", "manager")]
    assert rules[0].matches({"groups": ["x", "lab-annotators"]}) and not rules[0].matches({"groups": "x"})
    assert oidc.role_rules("", list(Role.values)) == []
    with pytest.raises(ValueError, match="not claim:value=project-slug/role"):
        oidc.role_rules("groups=ynat/annotator", list(Role.values))
    with pytest.raises(ValueError, match="names the role 'admin'"):
        oidc.role_rules("groups:x=ynat/admin", list(Role.values))


@pytest.mark.parametrize(("change", "code"), [
    ({"GOLDSET_OIDC_CLIENT_SECRET": ""}, "goldset.E010"),
    ({"GOLDSET_OIDC_ISSUER": ""}, "goldset.E011"),
    ({"GOLDSET_OIDC_ISSUER": "id.example.org"}, "goldset.E012"),
    ({"GOLDSET_OIDC_SCOPES": "email profile"}, "goldset.E013"),
    ({"GOLDSET_OIDC_SIGNING_ALGS": ["none"]}, "goldset.E014"),
    ({"GOLDSET_OIDC_ROLE_MAP": "groups:x=ynat/owner"}, "goldset.E015"),
])
def test_a_configuration_that_cannot_work_stops_the_start(sso_on, settings, change, code) -> None:
    for name, value in change.items():
        setattr(settings, name, value)
    with pytest.raises(SystemCheckError, match=re.escape(code)):
        call_command("check")


def test_the_sound_configuration_passes(sso_on) -> None:
    call_command("check", fail_level="WARNING")


@pytest.mark.parametrize(("change", "code"), [
    ({"GOLDSET_OIDC_ISSUER": "http://id.example.org/realms/lab"}, "goldset.W011"),
    ({"GOLDSET_OIDC_END_SESSION_ENDPOINT": "http://id.example.org/logout"}, "goldset.W011"),
    ({"GOLDSET_OIDC_SIGNING_ALGS": ["RS256", "HS256"]}, "goldset.W012"),
    ({"GOLDSET_OIDC_ROLE_MAP": "groups:x=ynat/annotator"}, "goldset.W013"),
])
def test_check_deploy_warns_of_sso_misconfiguration(sso_on, settings, change, code) -> None:
    assert not [m for m in oidc.deployment() if m.id == code]
    for name, value in change.items():
        setattr(settings, name, value)
    assert [m.id for m in oidc.deployment()] == [code]


@pytest.mark.django_db
def test_an_unreachable_provider_is_explained_not_a_server_error(sso_on, settings, client) -> None:
    settings.GOLDSET_OIDC_ISSUER = "http://127.0.0.1:9/nowhere"  # nothing listens on the discard port
    response = client.get(reverse("annotation:sso-start"), follow=True)
    assert response.redirect_chain[-1][0] == reverse("annotation:login")
    assert "could not be reached" in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("reason", ["denied", "state"])
def test_the_login_page_and_its_refusals_read_as_korean(sso_on, settings, client, reason) -> None:
    settings.GOLDSET_OIDC_PROVIDER_NAME = "Lab ID"
    query = {"error": "access_denied"} if reason == "denied" else {"code": "c", "state": "s"}
    page = client.get(reverse("annotation:sso-callback"), query, follow=True, headers={"accept-language": "ko"})
    html = page.content.decode()
    assert 'class="messages"' in html and "Lab ID 계정으로 로그인" in html
    assert offending_text(html, data=["Lab ID", "Goldset"]) == []


@pytest.mark.django_db
def test_signing_out_after_sso_ends_the_session_then_sends_the_browser_to_the_provider(sso_on, settings, client,
                                                                                      make_user) -> None:
    settings.GOLDSET_OIDC_END_SESSION_ENDPOINT = "https://id.example.org/realms/lab/logout"
    client.force_login(make_user("alice"))
    session = client.session
    session["oidc_id_token"] = "the.id.token"
    session.save()
    page = client.post(reverse("annotation:logout"), headers={"accept-language": "ko"})
    assert page.status_code == 200 and "_auth_user_id" not in client.session
    html = page.content.decode()
    assert ('content="0;url=https://id.example.org/realms/lab/logout?id_token_hint=the.id.token&amp;client_id=goldset'
            '&amp;post_logout_redirect_uri=http%3A%2F%2Ftestserver%2Faccounts%2Flogin%2F"') in html
    assert "로그아웃" in html and offending_text(html, data=["Goldset"]) == []
    # Without an SSO sign-in (a password login), signing out stays on Goldset.
    client.force_login(make_user("local"))
    assert client.post(reverse("annotation:logout"))["Location"] == reverse("annotation:login")
