"""The token endpoint (``POST /api/auth/token/``, with the login lockout's 429 and expired keys replaced) and who
may read the API schema."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions, status
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from ..services import token_issue
from .parsers import CheckedJSONParser


class ObtainTokenView(ObtainAuthToken):
    """Exchange a username and password for an API token (valid for ``GOLDSET_API_TOKEN_DAYS`` days; asking
    again after it expired issues a new one). Failed attempts count towards the login lockout: a locked-out
    account answers 429 with ``Retry-After``."""

    # DRF's view lists its own parsers; these are the project's, with the JSON depth and NUL checks.
    parser_classes = [CheckedJSONParser, FormParser, MultiPartParser]

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        if not serializer.is_valid():
            # Axes flags the lockout on the request it was given: DRF's, which axes' middleware (answering 429
            # for the pages) never sees, so DRF's view would answer 400.
            if getattr(request, "axes_locked_out", False):
                return Response(
                    {"detail": _("Too many failed login attempts: this account is locked for this address. "
                                 "Try again later."), "code": "locked_out"},
                    status=status.HTTP_429_TOO_MANY_REQUESTS,
                    headers={"Retry-After": str(int(settings.AXES_COOLOFF_TIME.total_seconds()))})
            raise exceptions.ValidationError(serializer.errors)
        return Response({"token": token_issue(serializer.validated_data["user"]).key})


class SchemaAccess(BasePermission):
    """The OpenAPI schema and its browsable docs: open when ``GOLDSET_API_SCHEMA_PUBLIC`` (the default in
    development), otherwise for signed-in users and token holders only (the default in production)."""

    def has_permission(self, request: Request, view: Any) -> bool:
        return settings.GOLDSET_API_SCHEMA_PUBLIC or bool(request.user and request.user.is_authenticated)
