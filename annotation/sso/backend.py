"""mozilla-django-oidc's authorization-code backend with Goldset's checks on the ID token and its user rules.

The library checks the signature and the nonce; it neither checks the token's audience, issuer or expiry
(``verify_aud`` is off) nor accepts several algorithms, so :meth:`SsoBackend.verify_token` does all of it. Users
are found, linked or created by ``services.user_for_claims``, never by the library's email match.
"""

from __future__ import annotations

from typing import Any

import jwt
import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured, SuspiciousOperation
from django.http import HttpRequest
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from config import oidc

from ..models import User
from .services import SsoRefused, user_for_claims


class SsoBackend(OIDCAuthenticationBackend):
    get_settings = staticmethod(oidc.setting)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # The library reads its settings here; Goldset's are read when used, so this backend can sit in
        # AUTHENTICATION_BACKENDS while SSO is off (it then answers nothing).
        self.UserModel = get_user_model()

    @property
    def OIDC_OP_TOKEN_ENDPOINT(self) -> str:  # the library's attribute names, read when used
        return oidc.setting("OIDC_OP_TOKEN_ENDPOINT")

    @property
    def OIDC_OP_USER_ENDPOINT(self) -> str:
        return oidc.setting("OIDC_OP_USER_ENDPOINT")

    @property
    def OIDC_OP_JWKS_ENDPOINT(self) -> str:
        return oidc.setting("OIDC_OP_JWKS_ENDPOINT")

    @property
    def OIDC_RP_CLIENT_ID(self) -> str:
        return settings.GOLDSET_OIDC_CLIENT_ID

    @property
    def OIDC_RP_CLIENT_SECRET(self) -> str:
        return settings.GOLDSET_OIDC_CLIENT_SECRET

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> User | None:
        """Only the provider's callback (which passes the sign-in's ``nonce``) reaches the library's code flow. A
        refusal is left on the request for the callback view to record and explain."""
        if request is None or "nonce" not in kwargs or not oidc.enabled():
            return None
        try:
            return super().authenticate(request, **kwargs)
        except SsoRefused as refusal:
            request.sso_refusal = refusal.reason
        except (requests.RequestException, ValueError, ImproperlyConfigured):
            # Unreachable, an answer that is not JSON, or a discovery document naming another issuer.
            request.sso_refusal = "provider"
        except SuspiciousOperation:
            request.sso_refusal = "token"
        return None

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        """The ID token's signature with an accepted algorithm, its audience, issuer, expiry and nonce."""
        try:
            alg = jwt.get_unverified_header(token).get("alg")
        except jwt.PyJWTError:
            raise SsoRefused("token") from None
        if alg not in settings.GOLDSET_OIDC_SIGNING_ALGS:
            raise SsoRefused("token")
        key: Any = self.OIDC_RP_CLIENT_SECRET if alg.startswith("HS") else self.retrieve_matching_jwk(token)
        try:
            payload = jwt.decode(token, key, algorithms=[alg], audience=self.OIDC_RP_CLIENT_ID,
                                 issuer=settings.GOLDSET_OIDC_ISSUER, leeway=60,
                                 options={"require": ["exp", "iat", "iss", "aud", "sub"]})
        except jwt.InvalidAudienceError:
            raise SsoRefused("audience") from None
        except jwt.InvalidIssuerError:
            raise SsoRefused("issuer") from None
        except jwt.PyJWTError:
            raise SsoRefused("token") from None
        # With several audiences the token must name this client as the party it was issued to (OIDC Core 3.1.3.7).
        audiences = payload["aud"] if isinstance(payload["aud"], list) else [payload["aud"]]
        if len(audiences) > 1 and payload.get("azp") != self.OIDC_RP_CLIENT_ID:
            raise SsoRefused("audience")
        if "nonce" in kwargs and payload.get("nonce") != kwargs["nonce"]:
            raise SsoRefused("nonce")
        return payload

    def get_or_create_user(self, access_token: str, id_token: str | None,
                           payload: dict[str, Any] | None) -> User:
        """The user for the provider's user info; in the code flow, the user info must be the ID token's subject's,
        and the signed ID token's claims win over it."""
        user_info = self.get_userinfo(access_token, id_token, payload)
        if payload is not None:
            if str(user_info.get("sub")) != str(payload["sub"]):
                raise SsoRefused("subject")
            user_info = {**user_info, **payload}
        return user_for_claims(user_info)
