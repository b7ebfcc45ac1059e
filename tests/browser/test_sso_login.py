"""Single sign-on in a real browser against a real OpenID Connect provider (tests/sso/oidc_provider.py: django-oauth-
toolkit in OIDC mode in a subprocess on 127.0.0.1): the button, the provider's login and consent pages, landing
signed in, the link kept across sign-ins, logout at both ends, and refusals explained in both languages."""

from __future__ import annotations

import re
from typing import Any

import pytest
from axes.models import AccessAttempt

from annotation.models import SsoIdentity, User
from tests.browser.axe import serious_violations
from tests.sso.oidc_provider import provider, sso  # noqa: F401 (fixtures)
from tests.sso.provider import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _at_provider(page: Any, username: str, *, allow: bool = True) -> None:
    """Sign in on the provider's page (when it asks) and answer its consent page."""
    page.wait_for_url(re.compile(r"http://127\.0\.0\.1:\d+/"))
    if page.locator("#provider-username").count():
        page.locator("#provider-username").fill(username)
        page.locator("#provider-password").fill(PASSWORD)
        page.locator("#provider-sign-in").click()
    page.locator("input[value=Authorize]" if allow else "input[value=Cancel]").click()


def test_sign_in_creates_then_links_the_user_and_sign_out_ends_both_sessions(page: Any, sso) -> None:  # noqa: F811
    page.goto("/accounts/login/")
    page.get_by_role("link", name="Sign in with Lab ID").click()
    _at_provider(page, "alice")
    page.wait_for_url(f"{sso.goldset_url}/")
    assert page.locator("header .user").inner_text().startswith("alice")
    alice = User.objects.get()
    assert (alice.username, alice.email, alice.has_usable_password()) == ("alice", "alice@example.org", False)
    assert not alice.memberships.exists()  # roles are Goldset's: a new user has none
    assert SsoIdentity.objects.get().user == alice

    page.get_by_role("button", name="Sign out").click()
    # Goldset's session ends, then a page of Goldset's sends the browser to the provider's logout (RP-initiated),
    # which sends it back here.
    page.wait_for_url(f"{sso.goldset_url}/accounts/login/")
    page.goto("/")
    assert "/accounts/login/" in page.url
    page.get_by_role("link", name="Sign in with Lab ID").click()
    page.wait_for_url(re.compile(r"http://127\.0\.0\.1:\d+/accounts/login/"))  # the provider asks again

    _at_provider(page, "alice")
    page.wait_for_url(f"{sso.goldset_url}/")
    assert User.objects.count() == 1 and SsoIdentity.objects.count() == 1
    assert page.locator("header .user").inner_text().startswith("alice")


@pytest.mark.parametrize(("locale", "cancelled", "unverified"), [
    ("en-US", "Sign-in was cancelled at the identity provider", "has not verified your email address"),
    ("ko-KR", "ID 공급자에서 로그인이 취소되어", "ID 공급자가 이메일 주소를 인증하지 않아"),
])
def test_refused_sign_ins_are_recorded_and_explained(page: Any, sso, locale: str, cancelled: str,  # noqa: F811
                                                     unverified: str) -> None:
    AccessAttempt.objects.all().delete()
    page.goto("/accounts/login/")
    page.locator("a.sso-start").click()
    _at_provider(page, "alice", allow=False)
    page.wait_for_url(f"{sso.goldset_url}/accounts/login/")
    assert cancelled in page.locator(".messages").inner_text()

    page.locator("a.sso-start").click()
    page.wait_for_url(re.compile(r"http://127\.0\.0\.1:\d+/"))
    page.context.clear_cookies()  # another person at the provider: mallory, whose email it has not verified
    page.goto(f"{sso.goldset_url}/accounts/login/")
    page.locator("a.sso-start").click()
    _at_provider(page, "mallory")
    page.wait_for_url(f"{sso.goldset_url}/accounts/login/")
    assert unverified in page.locator(".messages").inner_text()
    assert not User.objects.exists()
    # Both refusals are recorded where failed password logins are: django-axes' attempts, by client address.
    assert AccessAttempt.objects.get(username__isnull=True).failures_since_start == 2


@pytest.mark.parametrize("locale", ["en-US", "ko-KR"])
@pytest.mark.parametrize("local_login", [True, False])
def test_the_login_page_offers_sso_in_the_readers_language(page: Any, settings, locale: str,
                                                           local_login: bool) -> None:
    settings.GOLDSET_OIDC_CLIENT_ID = "goldset"
    settings.GOLDSET_OIDC_PROVIDER_NAME = "Lab ID"
    settings.GOLDSET_LOCAL_LOGIN = local_login
    page.goto("/accounts/login/")
    button = page.locator("a.sso-start")
    assert button.inner_text() == ("Sign in with Lab ID" if locale == "en-US" else "Lab ID 계정으로 로그인")
    assert page.locator("[name=password]").count() == (1 if local_login else 0)
    assert serious_violations(page) == []
    page.locator("main").screenshot(path=f"/tmp/goldset-sso-login-{locale}-{local_login}.png")
