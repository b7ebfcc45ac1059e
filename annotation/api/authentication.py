"""Token authentication with the lookup in SQL: every API request runs it, and DRF's ORM query
(``select_related("user").get(key=…)``) cost about 1 ms of CPU to build, several times its execution."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from ..models import User
from ..selectors import columns, fetch_instance

_TOKEN_SQL = (f"SELECT {columns(User, 'u')}, t.created FROM {User._meta.db_table} u"
              f" JOIN {Token._meta.db_table} t ON t.user_id = u.id WHERE t.key = %s")


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's ``Authorization: Token <key>`` scheme, same answers and messages, one cheaper query."""

    def authenticate_credentials(self, key: str) -> tuple[User, Token]:
        found = fetch_instance(User, _TOKEN_SQL, [key])
        if found is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        user, (created,) = found
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return user, Token(key=key, user=user, created=created)
