"""Single sign-on through the API and the ID token checks, against the real provider of conftest.py."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from axes.models import AccessAttempt
from rest_framework.test import APIClient

from annotation import services
from annotation.models import Role, SsoIdentity, User
from annotation.sso.backend import SsoBackend
from annotation.sso.services import SsoRefused
from annotation.task_types import get_task_type

pytestmark = pytest.mark.django_db(transaction=True)


def _project(slug: str, manager: User) -> Any:
    return services.project_create(name=slug, slug=slug, task_type="tc", created_by=manager,
                                   annotators_per_item=1,
                                   label_schema=get_task_type("tc").default_schema())


def test_a_provider_access_token_authenticates_api_calls_as_the_linked_user(sso, django_user_model) -> None:
    alice = django_user_model.objects.create_user("alice-local", email="Alice@example.org", password="x-pw-12345")
    other = django_user_model.objects.create_user("someone", password="x-pw-12345")
    mine, _ = _project("alice-project", alice), _project("other-project", other)
    access = sso.tokens("alice")["access_token"]

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {access}")
    response = client.get("/api/projects/")
    assert response.status_code == 200, response.content
    assert [p["slug"] for p in response.json()["results"]] == [mine.slug]
    identity = SsoIdentity.objects.get()
    assert identity.user == alice and identity.issuer == sso.issuer and identity.subject
    # The second call finds the same user by the stored subject; no second account, no second link.
    assert client.get("/api/projects/").status_code == 200
    assert User.objects.count() == 2 and SsoIdentity.objects.count() == 1


def test_an_invalid_access_token_is_401_and_recorded(sso, caplog) -> None:
    AccessAttempt.objects.all().delete()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer not-a-token-the-provider-issued")
    with caplog.at_level(logging.WARNING, logger="goldset.security"):
        response = client.get("/api/projects/")
    assert response.status_code == 401
    assert "single sign-on refused (token)" in caplog.text
    assert AccessAttempt.objects.filter(username__isnull=True).exists()
    assert not User.objects.exists()


def test_bearer_tokens_are_ignored_while_sso_is_off(settings, django_user_model) -> None:
    settings.GOLDSET_OIDC_CLIENT_ID = ""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer anything")
    assert client.get("/api/projects/").status_code == 401


def test_id_tokens_issued_to_another_client_are_refused(sso) -> None:
    backend = SsoBackend()
    mine = sso.tokens("alice", nonce="n-1")["id_token"]
    assert backend.verify_token(mine, nonce="n-1")["aud"] == "goldset"
    with pytest.raises(SsoRefused) as refused:
        backend.verify_token(mine, nonce="another sign-in's nonce")
    assert refused.value.reason == "nonce"
    theirs = sso.tokens("alice", client_id="other-app", nonce="n-2")["id_token"]
    with pytest.raises(SsoRefused) as refused:
        backend.verify_token(theirs, nonce="n-2")
    assert refused.value.reason == "audience"


def test_an_id_token_from_another_issuer_or_algorithm_is_refused(sso, settings) -> None:
    token = sso.tokens("alice", nonce="n")["id_token"]
    settings.GOLDSET_OIDC_JWKS_ENDPOINT = f"{sso.issuer}/.well-known/jwks.json"  # the keys stay the provider's
    settings.GOLDSET_OIDC_ISSUER = "http://127.0.0.1:1/elsewhere"
    with pytest.raises(SsoRefused) as refused:
        SsoBackend().verify_token(token, nonce="n")
    assert refused.value.reason == "issuer"
    settings.GOLDSET_OIDC_ISSUER = sso.issuer
    settings.GOLDSET_OIDC_SIGNING_ALGS = ["ES256"]
    with pytest.raises(SsoRefused) as refused:
        SsoBackend().verify_token(token, nonce="n")
    assert refused.value.reason == "token"


def test_roles_come_from_the_provider_only_through_an_explicit_rule(sso, settings, django_user_model) -> None:
    manager = django_user_model.objects.create_user("pi", password="x-pw-12345")
    project = _project("lab", manager)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {sso.tokens('alice')['access_token']}")
    assert client.get("/api/projects/").json()["results"] == []  # the groups claim alone grants nothing
    alice = SsoIdentity.objects.get().user
    assert not alice.memberships.exists()

    settings.GOLDSET_OIDC_ROLE_MAP = "groups:lab-annotators=lab/annotator; groups:lab-leads=lab/manager"
    assert [p["slug"] for p in client.get("/api/projects/").json()["results"]] == ["lab"]
    assert alice.memberships.get(project=project).role == Role.ANNOTATOR
    # A role set in Goldset is kept: the rule never changes it.
    services.membership_set(project=project, user=alice, role=Role.MAINTAINER)
    client.get("/api/projects/")
    assert alice.memberships.get(project=project).role == Role.MAINTAINER


def test_a_first_sign_in_with_an_unverified_email_neither_links_nor_creates(sso, django_user_model) -> None:
    django_user_model.objects.create_user("mallory-local", email="mallory@example.org", password="x-pw-12345")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {sso.tokens('mallory')['access_token']}")
    assert client.get("/api/projects/").status_code == 401
    assert not SsoIdentity.objects.exists() and User.objects.count() == 1


def test_with_introspection_a_token_of_another_client_is_refused(sso, settings, django_user_model, caplog) -> None:
    settings.GOLDSET_OIDC_INTROSPECTION_ENDPOINT = f"{sso.issuer}/introspect/"
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {sso.tokens('alice', client_id='other-app')['access_token']}")
    with caplog.at_level(logging.WARNING, logger="goldset.security"):
        assert client.get("/api/projects/").status_code == 401
    assert "single sign-on refused (audience)" in caplog.text
    assert not User.objects.exists()
    # An administrator can accept a named client's tokens (a command-line tool registered with the provider).
    settings.GOLDSET_OIDC_API_CLIENTS = ["other-app"]
    assert client.get("/api/projects/").status_code == 200
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {sso.tokens('alice')['access_token']}")
    assert client.get("/api/projects/").status_code == 200
    assert User.objects.count() == 1


def test_an_email_two_accounts_share_or_a_deactivated_account_is_refused(sso, django_user_model) -> None:
    for name in ("alice-1", "alice-2"):
        django_user_model.objects.create_user(name, email="alice@example.org", password="x-pw-12345")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {sso.tokens('alice')['access_token']}")
    assert client.get("/api/projects/").status_code == 401
    assert not SsoIdentity.objects.exists()

    django_user_model.objects.filter(username="alice-2").update(email="")
    assert client.get("/api/projects/").status_code == 200
    alice = SsoIdentity.objects.get().user
    assert alice.username == "alice-1"
    alice.is_active = False
    alice.save()
    assert client.get("/api/projects/").status_code == 401
