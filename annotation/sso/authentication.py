"""``Authorization: Bearer <access token>``: an access token from the SSO provider authenticates an API call as the
user linked to the token's subject.

The token is checked by asking the provider's user-info endpoint with it (mozilla-django-oidc's DRF scheme): the
provider refuses an expired or revoked token, and the claims it answers with go through the same rules as a
browser sign-in (``services.user_for_claims``). While SSO is off the scheme answers nothing.
"""

from __future__ import annotations

import requests
from django.utils.translation import gettext_lazy as _
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
            user = self.backend.get_or_create_user(access_token, None, None)
        except SsoRefused as refusal:
            sign_in_refused(request._request, refusal.reason, counted=False)
            raise exceptions.AuthenticationFailed(_("The identity provider's account cannot sign in here.")) from None
        except requests.HTTPError as error:
            if error.response is not None and error.response.status_code in (400, 401, 403):
                sign_in_refused(request._request, "token", counted=False)
                raise exceptions.AuthenticationFailed(_("Invalid or expired access token.")) from None
            raise exceptions.AuthenticationFailed(_("The identity provider could not be reached.")) from None
        except requests.RequestException:
            raise exceptions.AuthenticationFailed(_("The identity provider could not be reached.")) from None
        return user, access_token
