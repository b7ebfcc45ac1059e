"""API tokens: the lookup in SQL, refusing expired keys.

Every API request runs the lookup, and building DRF's ORM query (``select_related("user").get(key=…)``)
costs more CPU than running it (docs/performance.md). A token is valid for ``GOLDSET_API_TOKEN_DAYS`` after it
was issued; asking the token endpoint (``views_token.py``) again after that issues a new key
(``services.token_issue``). Setting a password deletes the user's token
(``services.tokens_revoke_on_password_change``), so a leaked key dies with the password it was obtained with.
"""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from ..models import User
from ..selectors import columns, fetch_instance
from ..services.users import token_expired

_TOKEN_SQL = (f"SELECT {columns(User, 'u')}, t.created FROM {User._meta.db_table} u"
              f" JOIN {Token._meta.db_table} t ON t.user_id = u.id WHERE t.key = %s")


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's ``Authorization: Token <key>`` scheme with one cheaper query, refusing expired keys."""

    def authenticate_credentials(self, key: str) -> tuple[User, Token]:
        found = fetch_instance(User, _TOKEN_SQL, [key])
        if found is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        user, (created,) = found
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        if token_expired(created):
            raise exceptions.AuthenticationFailed(
                _("Token has expired; request a new one with POST /api/auth/token/."))
        return user, Token(key=key, user=user, created=created)
