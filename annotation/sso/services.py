"""Single sign-on's writes: finding, linking or creating the Goldset user for the provider's claims, the roles an
administrator mapped from claims, and the record of a refused sign-in.

Rules (docs/deployment.md, "Single sign-on"):

- a person is found by the provider's ``iss`` and ``sub`` once linked; their email claim no longer matters then;
- on a first sign-in, an existing account is linked by email only if the provider says the email is verified, and
  a new account is created only then too;
- project roles are Goldset's; the provider grants one only through an administrator's ``GOLDSET_OIDC_ROLE_MAP``
  rule, and only where the user has no role in that project yet (a role set in Goldset is never changed).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from django.conf import settings
from django.contrib.auth import user_login_failed
from django.db import IntegrityError, transaction
from django.http import HttpRequest
from django.utils import timezone

from config import oidc
from config.client_ip import client_ip

from ..models import Membership, Project, Role, User
from ..services import membership_set
from .models import SsoIdentity

logger = logging.getLogger("goldset.security")


class SsoRefused(Exception):
    """A sign-in the rules refuse; ``reason`` is one of :data:`REASONS` (recorded, and shown to the person)."""

    def __init__(self, reason: str) -> None:
        assert reason in REASONS, reason
        super().__init__(reason)
        self.reason = reason


#: Why a single sign-on was refused (what the audit records; the login page explains each).
REASONS = (
    "denied",            # the person (or the provider) refused at the provider
    "state",             # the callback does not belong to a sign-in this browser started
    "provider",          # the provider could not be reached or answered with an error
    "token",             # the ID token is malformed, expired, or not signed with an accepted key and algorithm
    "audience",          # the ID token was issued to another client
    "issuer",            # the ID token was issued by another provider
    "nonce",             # the ID token does not answer this sign-in (a replay)
    "subject",           # the user info does not belong to the ID token's subject
    "unverified_email",  # a first sign-in without an email the provider verified
    "conflict",          # the email matches several accounts, or one already linked to another provider account
    "inactive",          # the linked account is deactivated
)


def _email_verified(claims: dict[str, Any]) -> bool:
    # Some providers send the claim as the string "true".
    return claims.get("email_verified") in (True, "true", "True")


def _new_username(claims: dict[str, Any]) -> str:
    base = str(claims.get("preferred_username") or str(claims["email"]).split("@", 1)[0])
    base = re.sub(r"[^\w.@+-]", "", base)[:140] or "user"
    username, n = base, 1
    while User.objects.filter(username__iexact=username).exists():
        n += 1
        username = f"{base}-{n}"
    return username


def user_for_claims(claims: dict[str, Any], *, again: bool = True) -> User:
    """The user the provider's verified claims stand for: linked before, linked now by verified email, or new."""
    subject = str(claims.get("sub") or "")
    if not subject:
        raise SsoRefused("subject")
    issuer = settings.GOLDSET_OIDC_ISSUER
    try:
        with transaction.atomic():
            identity = SsoIdentity.objects.select_for_update().select_related("user").filter(
                issuer=issuer, subject=subject).first()
            if identity is None:
                identity = SsoIdentity(issuer=issuer, subject=subject, user=_link_or_create(claims, issuer))
            if not identity.user.is_active:
                raise SsoRefused("inactive")
            identity.last_login_at = timezone.now()
            identity.save()
            _grant_mapped_roles(identity.user, claims)
    except IntegrityError:
        # Two first sign-ins at once (one person's, or two people given the same new username): once more finds
        # the other's link, or picks another username.
        if not again:
            raise SsoRefused("conflict") from None
        return user_for_claims(claims, again=False)
    return identity.user


def _link_or_create(claims: dict[str, Any], issuer: str) -> User:
    email = str(claims.get("email") or "").strip()
    if not email or not _email_verified(claims):
        raise SsoRefused("unverified_email")
    matching = list(User.objects.filter(email__iexact=email, is_imported=False)[:2])
    if len(matching) > 1:
        raise SsoRefused("conflict")
    if matching:
        user = matching[0]
        if SsoIdentity.objects.filter(user=user, issuer=issuer).exists():
            raise SsoRefused("conflict")
        return user
    user = User(username=_new_username(claims), email=email,
                first_name=str(claims.get("given_name") or "")[:150],
                last_name=str(claims.get("family_name") or "")[:150])
    # Their password is the provider's: none in Goldset, so a local login can never reach the account.
    user.set_unusable_password()
    user.save()
    return user


def _grant_mapped_roles(user: User, claims: dict[str, Any]) -> None:
    rules = oidc.role_rules(settings.GOLDSET_OIDC_ROLE_MAP, list(Role.values))
    for rule in rules:
        if not rule.matches(claims):
            continue
        project = Project.objects.filter(slug=rule.project_slug).first()
        if project is None:
            logger.warning("GOLDSET_OIDC_ROLE_MAP names the project %r, which does not exist", rule.project_slug)
            continue
        if not Membership.objects.filter(project=project, user=user).exists():
            membership_set(project=project, user=user, role=rule.role)


def sign_in_refused(request: HttpRequest, reason: str, *, counted: bool) -> None:
    """Record a refused single sign-on where failed password logins are recorded: django-axes' attempts (through
    Django's ``user_login_failed``, so the same lockout applies) and the security log, with the reason and the
    client address, as for a password failure. ``counted``: Django's ``authenticate()`` already sent the signal."""
    logger.warning("single sign-on refused (%s) from %s", reason, client_ip(request))
    if not counted:
        user_login_failed.send(sender=__name__, request=request, credentials={"username": None})
