"""API tokens: the lookup in SQL, refusing expired keys.

Every API request runs the lookup, and building DRF's ORM query (``select_related("user").get(key=…)``)
costs more CPU than running it (docs/performance.md). A token is valid for ``GOLDSET_API_TOKEN_DAYS`` after it
was issued; asking the token endpoint (``views_token.py``) again after that issues a new key
(``services.token_issue``). Setting a password deletes the user's token
(``services.tokens_revoke_on_password_change``), so a leaked key dies with the password it was obtained with.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token
from rest_framework.request import Request

from ..models import Project, User
from ..selectors import ProjectAccess, token_owner
from ..services.users import token_expired


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's ``Authorization: Token <key>`` scheme with one cheaper query, refusing expired keys.

    Under ``/api/projects/{id}/`` the query also reads the project with the caller's access, which
    ``views.ProjectScoped`` then takes from ``request.projects_read`` instead of querying again. DRF makes an
    authenticator per request, so the project id can wait on it for ``authenticate_credentials``."""

    _project_id: int | None = None
    _project_read: tuple[Project, ProjectAccess] | None = None

    def authenticate(self, request: Request) -> tuple[User, Token] | None:
        kwargs: dict[str, Any] = (request.parser_context or {}).get("kwargs") or {}
        self._project_id = kwargs.get("project_pk")
        found = super().authenticate(request)
        if found is not None and self._project_id is not None:
            request.projects_read = {self._project_id: self._project_read}
        return found

    def authenticate_credentials(self, key: str) -> tuple[User, Token]:
        owner = token_owner(key, self._project_id)
        if owner is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        user = owner.user
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        if token_expired(owner.created):
            raise exceptions.AuthenticationFailed(
                _("Token has expired; request a new one with POST /api/auth/token/."))
        self._project_read = owner.project
        return user, Token(key=key, user=user, created=owner.created)
