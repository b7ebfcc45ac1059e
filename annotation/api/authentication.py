"""API tokens: the lookup in SQL, an expiry, rotation on password change, and the token endpoint.

Every API request runs the lookup, and building DRF's ORM query (``select_related("user").get(key=…)``)
costs more CPU than running it (docs/performance.md). A token is valid for ``GOLDSET_API_TOKEN_DAYS`` after it
was issued; asking the token endpoint (``views_token.py``) again after that issues a new key. Setting a
password deletes the user's token, so a leaked key dies with the password it was obtained with.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from ..models import User
from ..selectors import columns, fetch_instance

_TOKEN_SQL = (f"SELECT {columns(User, 'u')}, t.created FROM {User._meta.db_table} u"
              f" JOIN {Token._meta.db_table} t ON t.user_id = u.id WHERE t.key = %s")


def token_lifetime() -> timedelta:
    return timedelta(days=settings.GOLDSET_API_TOKEN_DAYS)


def token_expired(created: datetime) -> bool:
    if timezone.is_naive(created):
        # SQLite hands the raw column back without its zone; it is stored in UTC.
        created = created.replace(tzinfo=UTC)
    return created < timezone.now() - token_lifetime()


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


@transaction.atomic
def token_issue(user: User) -> Token:
    """The user's live token, or a new one when there is none or it has expired."""
    token = Token.objects.select_for_update().filter(user=user).first()
    if token is not None and not token_expired(token.created):
        return token
    if token is not None:
        token.delete()
    # get_or_create: a concurrent first request may have created it meanwhile.
    return Token.objects.get_or_create(user=user)[0]


def tokens_revoke_on_password_change(sender: type[User], instance: User, **kwargs: Any) -> None:
    """``post_save`` receiver: a save after ``set_password`` (Django keeps the new raw password in
    ``_password`` until the save has run the password-changed hooks) deletes the user's API token."""
    if getattr(instance, "_password", None) is not None:
        Token.objects.filter(user=instance).delete()
