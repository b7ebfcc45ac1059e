"""Users and their API tokens: accounts created by the demo, a token issued (or replaced when it expired) by
the token endpoint, and the token deleted when its user's password changes.

A token is valid for ``GOLDSET_API_TOKEN_DAYS`` after it was issued; ``annotation/api/authentication.py``
checks it on every request with :func:`token_expired`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Permission
from django.db import transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token

from ..models import User


def token_lifetime() -> timedelta:
    return timedelta(days=settings.GOLDSET_API_TOKEN_DAYS)


def token_expired(created: datetime) -> bool:
    if timezone.is_naive(created):
        # SQLite hands the raw column back without its zone; it is stored in UTC.
        created = created.replace(tzinfo=UTC)
    return created < timezone.now() - token_lifetime()


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


@transaction.atomic
def user_ensure(*, username: str, password: str, permissions: Sequence[str] = ()) -> User:
    """The user of that name, created with ``password`` when new (an existing user's password is left
    alone), holding the named ``annotation`` permissions (codenames, e.g. ``add_project``)."""
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.set_password(password)
        user.save()
    if permissions:
        user.user_permissions.add(*Permission.objects.filter(content_type__app_label="annotation",
                                                             codename__in=permissions))
    return user
