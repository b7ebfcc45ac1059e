"""Single sign-on with OpenID Connect: the provider's endpoints, the claim-to-role rules, the deployment checks.

Everything here is read from the settings (``GOLDSET_OIDC_*``, declared in config/settings.py from the
environment). The provider's endpoints are either given one by one or read from its discovery document
(``<issuer>/.well-known/openid-configuration``) the first time they are needed, then kept for the process's life
(a restart reads it again). The login flow itself is mozilla-django-oidc's, with Goldset's rules on top
(annotation/sso/).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
from django.conf import settings
from django.core.checks import CheckMessage, Error
from django.core.checks import Warning as CheckWarning
from django.core.exceptions import ImproperlyConfigured
from mozilla_django_oidc.utils import import_from_settings

#: mozilla-django-oidc's setting names, and the discovery document's field each is read from when not set.
_DISCOVERED = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint",
    "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",
    "OIDC_OP_JWKS_ENDPOINT": "jwks_uri",
    "OIDC_OP_END_SESSION_ENDPOINT": "end_session_endpoint",
    "OIDC_OP_INTROSPECTION_ENDPOINT": "introspection_endpoint",
}
_EXPLICIT = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": lambda: settings.GOLDSET_OIDC_AUTHORIZATION_ENDPOINT,
    "OIDC_OP_TOKEN_ENDPOINT": lambda: settings.GOLDSET_OIDC_TOKEN_ENDPOINT,
    "OIDC_OP_USER_ENDPOINT": lambda: settings.GOLDSET_OIDC_USERINFO_ENDPOINT,
    "OIDC_OP_JWKS_ENDPOINT": lambda: settings.GOLDSET_OIDC_JWKS_ENDPOINT,
    "OIDC_OP_END_SESSION_ENDPOINT": lambda: settings.GOLDSET_OIDC_END_SESSION_ENDPOINT,
    "OIDC_OP_INTROSPECTION_ENDPOINT": lambda: settings.GOLDSET_OIDC_INTROSPECTION_ENDPOINT,
    "OIDC_RP_CLIENT_ID": lambda: settings.GOLDSET_OIDC_CLIENT_ID,
    "OIDC_RP_CLIENT_SECRET": lambda: settings.GOLDSET_OIDC_CLIENT_SECRET,
    "OIDC_RP_SCOPES": lambda: settings.GOLDSET_OIDC_SCOPES,
}
_HOW = "See docs/deployment.md, 'Single sign-on'."


def enabled() -> bool:
    """SSO is on when a client id is configured; off (the default) nothing of it is reachable."""
    return bool(settings.GOLDSET_OIDC_CLIENT_ID)


def local_login() -> bool:
    """Whether Goldset's own username-and-password login is offered. Without SSO it always is: turning it off then
    would lock everyone out."""
    return settings.GOLDSET_LOCAL_LOGIN or not enabled()


@functools.cache
def _discovery(issuer: str) -> dict[str, Any]:
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    response = requests.get(url, timeout=settings.GOLDSET_OIDC_TIMEOUT)
    response.raise_for_status()
    document = response.json()
    if document.get("issuer", "").rstrip("/") != issuer.rstrip("/"):
        raise ImproperlyConfigured(f"the discovery document at {url} names the issuer {document.get('issuer')!r}, "
                                   f"not GOLDSET_OIDC_ISSUER {issuer!r}")
    return document


def setting(name: str, *default: Any) -> Any:
    """A mozilla-django-oidc setting: Goldset's ``GOLDSET_OIDC_*`` or the provider's discovery document for those
    Goldset configures, the library's own lookup (its fixed settings in config/settings.py, else its default) for
    the rest."""
    if name not in _EXPLICIT:
        return import_from_settings(name, *default)
    value = _EXPLICIT[name]()
    if value:
        return value
    if name in _DISCOVERED and settings.GOLDSET_OIDC_ISSUER:
        found = _discovery(settings.GOLDSET_OIDC_ISSUER).get(_DISCOVERED[name])
        if found:
            return found
    if default:
        return default[0]
    raise ImproperlyConfigured(f"single sign-on needs the setting behind {name} (or GOLDSET_OIDC_ISSUER for "
                               "discovery); see docs/deployment.md, 'Single sign-on'")


@dataclass(frozen=True)
class RoleRule:
    """``claim:value=project-slug/role``: a user whose claim holds the value gets the role in the project."""

    claim: str
    value: str
    project_slug: str
    role: str

    def matches(self, claims: dict[str, Any]) -> bool:
        held = claims.get(self.claim)
        if isinstance(held, list):
            return self.value in [str(v) for v in held]
        return held is not None and str(held) == self.value


def role_rules(text: str, roles: list[str]) -> list[RoleRule]:
    """Parse ``GOLDSET_OIDC_ROLE_MAP`` (rules separated by ``;``); a malformed rule is a ValueError naming it."""
    rules = []
    for raw in text.split(";"):
        rule = raw.strip()
        if not rule:
            continue
        try:
            left, right = rule.rsplit("=", 1)
            claim, value = left.split(":", 1)
            project_slug, role = right.split("/", 1)
        except ValueError:
            raise ValueError(f"GOLDSET_OIDC_ROLE_MAP rule {rule!r} is not claim:value=project-slug/role") from None
        claim, value, project_slug, role = claim.strip(), value.strip(), project_slug.strip(), role.strip()
        if not (claim and value and project_slug):
            raise ValueError(f"GOLDSET_OIDC_ROLE_MAP rule {rule!r} has an empty claim, value or project")
        if role not in roles:
            raise ValueError(f"GOLDSET_OIDC_ROLE_MAP rule {rule!r} names the role {role!r}; "
                             f"expected one of {', '.join(roles)}")
        rules.append(RoleRule(claim, value, project_slug, role))
    return rules


def _endpoints() -> dict[str, str]:
    named = {
        "GOLDSET_OIDC_ISSUER": settings.GOLDSET_OIDC_ISSUER,
        "GOLDSET_OIDC_AUTHORIZATION_ENDPOINT": settings.GOLDSET_OIDC_AUTHORIZATION_ENDPOINT,
        "GOLDSET_OIDC_TOKEN_ENDPOINT": settings.GOLDSET_OIDC_TOKEN_ENDPOINT,
        "GOLDSET_OIDC_USERINFO_ENDPOINT": settings.GOLDSET_OIDC_USERINFO_ENDPOINT,
        "GOLDSET_OIDC_JWKS_ENDPOINT": settings.GOLDSET_OIDC_JWKS_ENDPOINT,
        "GOLDSET_OIDC_END_SESSION_ENDPOINT": settings.GOLDSET_OIDC_END_SESSION_ENDPOINT,
        "GOLDSET_OIDC_INTROSPECTION_ENDPOINT": settings.GOLDSET_OIDC_INTROSPECTION_ENDPOINT,
    }
    return {env: url for env, url in named.items() if url}


def configuration(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """``manage.py check``: an SSO configuration that cannot work is an error at start, not at the first login."""
    if not enabled():
        if not settings.GOLDSET_LOCAL_LOGIN:
            return [CheckWarning("GOLDSET_LOCAL_LOGIN is off but single sign-on is not configured "
                                 "(GOLDSET_OIDC_CLIENT_ID is empty): the password login stays on.",
                                 hint=_HOW, id="goldset.W010")]
        return []
    found: list[CheckMessage] = []
    if not settings.GOLDSET_OIDC_CLIENT_SECRET:
        found.append(Error("GOLDSET_OIDC_CLIENT_ID is set but GOLDSET_OIDC_CLIENT_SECRET is empty.",
                           hint=_HOW, id="goldset.E010"))
    if not settings.GOLDSET_OIDC_ISSUER:
        found.append(Error("Single sign-on needs GOLDSET_OIDC_ISSUER: ID tokens are checked against it (and the "
                           "endpoints are read from its discovery document unless each is set).",
                           hint=_HOW, id="goldset.E011"))
    elif not settings.GOLDSET_OIDC_ISSUER.startswith(("https://", "http://")):
        found.append(Error(f"GOLDSET_OIDC_ISSUER {settings.GOLDSET_OIDC_ISSUER!r} is not an http(s) URL.",
                           hint=_HOW, id="goldset.E012"))
    if "openid" not in settings.GOLDSET_OIDC_SCOPES.split():
        found.append(Error(f"GOLDSET_OIDC_SCOPES {settings.GOLDSET_OIDC_SCOPES!r} lacks 'openid'.",
                           hint=_HOW, id="goldset.E013"))
    bad_algs = [alg for alg in settings.GOLDSET_OIDC_SIGNING_ALGS if alg not in SIGNING_ALGS]
    if bad_algs or not settings.GOLDSET_OIDC_SIGNING_ALGS:
        found.append(Error(f"GOLDSET_OIDC_SIGNING_ALGS names {', '.join(bad_algs) or 'nothing'}; "
                           f"expected some of {', '.join(SIGNING_ALGS)}.", hint=_HOW, id="goldset.E014"))
    return found


#: Algorithms an ID token may be signed with; ``none`` never is accepted.
SIGNING_ALGS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512",
                "HS256", "HS384", "HS512")


def deployment(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """``manage.py check --deploy``: SSO over plain HTTP, or with a shared-secret signature, in production."""
    if not enabled():
        return []
    found: list[CheckMessage] = []
    for env, url in _endpoints().items():
        host = urlsplit(url).hostname or ""
        if urlsplit(url).scheme != "https" and host not in {"localhost", "127.0.0.1", "::1"}:
            found.append(CheckWarning(
                f"{env} is {url!r}: the authorization code, the tokens and the user's claims would cross the "
                "network unencrypted. Use the provider's https:// address.", hint=_HOW, id="goldset.W011"))
    if any(alg.startswith("HS") for alg in settings.GOLDSET_OIDC_SIGNING_ALGS):
        found.append(CheckWarning(
            "GOLDSET_OIDC_SIGNING_ALGS accepts an HS* (shared-secret) signature: anyone holding the client secret "
            "can then sign ID tokens. Prefer RS256 or ES256 with the provider's published keys.",
            hint=_HOW, id="goldset.W012"))
    if settings.GOLDSET_OIDC_ROLE_MAP.strip():
        found.append(CheckWarning(
            "GOLDSET_OIDC_ROLE_MAP is set: the identity provider's claims grant project roles in Goldset. Make sure "
            "only the provider's administrators can set those claims.", hint=_HOW, id="goldset.W013"))
    return found
