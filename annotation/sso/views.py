"""The login page (with the SSO button, and without the password form when local accounts are off), the start of
a single sign-on and the provider's callback (mozilla-django-oidc's views), and the logout that also ends the
provider's session when the provider advertises an ``end_session_endpoint``."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import requests
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.core.exceptions import ImproperlyConfigured, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.generic import View
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from config import oidc

from .services import sign_in_refused

_UNVERIFIED = ("token", "audience", "issuer", "nonce", "subject", "state")


def _refusal_message(reason: str) -> str:
    if reason == "denied":
        return _("Sign-in was cancelled at the identity provider, so you are not signed in.")
    if reason == "unverified_email":
        return _("Your identity provider has not verified your email address, so it cannot be linked to a Goldset "
                 "account. Verify it with the provider, or ask an administrator.")
    if reason == "conflict":
        return _("Your email address matches an account that cannot be linked automatically. Ask an administrator.")
    if reason == "inactive":
        return _("This account is deactivated. Ask an administrator.")
    if reason in _UNVERIFIED:
        return _("The identity provider's answer could not be verified, so you are not signed in. Try again; if it "
                 "happens again, tell an administrator.")
    return _("The identity provider could not be reached. Try again later.")


def provider_label() -> str:
    """The SSO button's text, in the reader's language."""
    name = settings.GOLDSET_OIDC_PROVIDER_NAME
    return _("Sign in with %(provider)s") % {"provider": name} if name else _("Sign in with single sign-on")


class LoginView(auth_views.LoginView):
    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["sso_enabled"] = oidc.enabled()
        context["sso_label"] = provider_label()
        context["local_login"] = oidc.local_login()
        return context


class SsoStartView(OIDCAuthenticationRequestView):
    """Sends the browser to the provider, with a state, a nonce and a PKCE challenge kept in the session."""

    get_settings = staticmethod(oidc.setting)

    def __init__(self, **kwargs: Any) -> None:
        View.__init__(self, **kwargs)  # the library reads the endpoint here; it is read in get(), once SSO is on

    def get(self, request: HttpRequest) -> HttpResponse:
        if not oidc.enabled():
            raise Http404
        try:
            self.OIDC_OP_AUTH_ENDPOINT = oidc.setting("OIDC_OP_AUTHORIZATION_ENDPOINT")
        except (requests.RequestException, ValueError, ImproperlyConfigured):
            sign_in_refused(request, "provider", counted=False)
            messages.error(request, _refusal_message("provider"))
            return HttpResponseRedirect(reverse("annotation:login"))
        self.OIDC_RP_CLIENT_ID = settings.GOLDSET_OIDC_CLIENT_ID
        return super().get(request)


class SsoCallbackView(OIDCAuthenticationCallbackView):
    """The provider's answer: signs the person in, or records why not and says so on the login page."""

    get_settings = staticmethod(oidc.setting)

    @property
    def failure_url(self) -> str:
        return reverse("annotation:login")

    def get(self, request: HttpRequest) -> HttpResponse:
        if not oidc.enabled():
            raise Http404
        try:
            return super().get(request)
        except SuspiciousOperation:  # a state this browser never started (or already used)
            return self._refused("state", counted=False)

    def login_failure(self) -> HttpResponse:
        if self.request.GET.get("error"):
            return self._refused("denied", counted=False)
        refusal = getattr(self.request, "sso_refusal", None)
        if refusal:
            return self._refused(refusal, counted=True)
        user = getattr(self, "user", None)
        if user is not None and not user.is_active:
            return self._refused("inactive", counted=True)
        if hasattr(self, "user"):
            # authenticate() ran and was counted, but refused before Goldset's backend (axes' lockout, which its
            # middleware answers with 429).
            return self._refused("provider", counted=True)
        return self._refused("state", counted=False)  # no sign-in this browser started

    def _refused(self, reason: str, *, counted: bool) -> HttpResponse:
        sign_in_refused(self.request, reason, counted=counted)
        messages.error(self.request, _refusal_message(reason))
        return HttpResponseRedirect(self.failure_url)


class LogoutView(auth_views.LogoutView):
    """Ends the Goldset session; after a single sign-on, also the provider's (RP-initiated logout), when it
    advertises an ``end_session_endpoint``, coming back to the login page.

    The provider's logout is reached from a page of Goldset's, not by redirecting the sign-out form: the form's page
    allows forms to be sent only to Goldset (CSP ``form-action 'self'``), which browsers apply to the redirects a
    form's answer makes too."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        id_token = request.session.get("oidc_id_token")
        response = super().post(request, *args, **kwargs)
        if not (id_token and oidc.enabled()):
            return response
        try:
            end_session = oidc.setting("OIDC_OP_END_SESSION_ENDPOINT", "")
        except (requests.RequestException, ValueError, ImproperlyConfigured):
            return response  # Goldset's session is over all the same
        if not end_session:
            return response
        query = urlencode({"id_token_hint": id_token, "client_id": settings.GOLDSET_OIDC_CLIENT_ID,
                           "post_logout_redirect_uri": request.build_absolute_uri(reverse("annotation:login"))})
        return render(request, "registration/sso_logout.html", {
            "end_session_url": f"{end_session}{'&' if '?' in end_session else '?'}{query}",
            "provider": settings.GOLDSET_OIDC_PROVIDER_NAME or _("the identity provider")})
