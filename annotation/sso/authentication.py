"""``Authorization: Bearer <access token>``: an access token from the SSO provider authenticates an API call as the
user linked to the token's subject.

Where the provider has an introspection endpoint (RFC 7662; advertised in its discovery document or set in
``GOLDSET_OIDC_INTROSPECTION_ENDPOINT``), the token must be active and issued to Goldset's client (or one of
``GOLDSET_OIDC_API_CLIENTS``): a token another application of the same provider obtained is refused. Then the
provider's user-info endpoint is asked with it (mozilla-django-oidc's DRF scheme): the provider refuses an expired
or revoked token, and the claims it answers with go through the same rules as a browser sign-in
(``services.user_for_claims``). While SSO is off the scheme answers nothing.
"""

from __future__ import annotations

import requests
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from mozilla_django_oidc.contrib.drf import OIDCAuthentication
from rest_framework import exceptions
from rest_framework.request import Request

from config import oidc

from ..models import User
from .backend import SsoBackend
from .services import SsoRefused, sign_in_refused


class BearerAuthentication(OIDCAuthentication):
    def __init__(self) -> None:
        super().__init__(backend=SsoBackend())

    def authenticate(self, request: Request) -> tuple[User, str] | None:
        if not oidc.enabled():
            return None
        access_token = self.get_access_token(request)
        if not access_token:
            return None
        try:
            self._check_client(access_token)
            user = self.backend.get_or_create_user(access_token, None, None)
        except SsoRefused as refusal:
            sign_in_refused(request._request, refusal.reason, counted=False)
            raise exceptions.AuthenticationFailed(_("The identity provider's account cannot sign in here.")) from None
        except requests.HTTPError as error:
            if error.response is not None and error.response.status_code in (400, 401, 403):
                sign_in_refused(request._request, "token", counted=False)
                raise exceptions.AuthenticationFailed(_("Invalid or expired access token.")) from None
            raise exceptions.AuthenticationFailed(_("The identity provider could not be reached.")) from None
        except (requests.RequestException, ValueError, ImproperlyConfigured):
            raise exceptions.AuthenticationFailed(_("The identity provider could not be reached.")) from None
        return user, access_token

    @staticmethod
    def _check_client(access_token: str) -> None:
        endpoint = oidc.setting("OIDC_OP_INTROSPECTION_ENDPOINT", "")
        if not endpoint:
            return
        response = requests.post(endpoint, data={"token": access_token}, timeout=settings.GOLDSET_OIDC_TIMEOUT,
                                 auth=(settings.GOLDSET_OIDC_CLIENT_ID, settings.GOLDSET_OIDC_CLIENT_SECRET))
        response.raise_for_status()
        answer = response.json()
        if not answer.get("active"):
            raise SsoRefused("token")
        audience = answer.get("aud") or []
        issued_to = {answer.get("client_id"), answer.get("azp"), *([audience] if isinstance(audience, str)
                                                                   else audience)}
        if not issued_to & {settings.GOLDSET_OIDC_CLIENT_ID, *settings.GOLDSET_OIDC_API_CLIENTS}:
            raise SsoRefused("audience")


class BearerScheme(OpenApiAuthenticationExtension):
    """The scheme in the OpenAPI schema (drf-spectacular finds it by ``target_class``)."""

    target_class = BearerAuthentication
    name = "ssoBearer"

    def get_security_definition(self, auto_schema: object) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer",
                "description": "An access token from the single sign-on provider, when SSO is configured "
                               "(docs/deployment.md, 'Single sign-on')."}
