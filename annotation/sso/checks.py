"""``manage.py check``: the claim-to-role rules name real roles (config/oidc.py checks the rest of SSO's
configuration; it cannot see the annotation app's roles)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error

from config import oidc

from ..models import Role


def role_map(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    try:
        oidc.role_rules(settings.GOLDSET_OIDC_ROLE_MAP, list(Role.values))
    except ValueError as error:
        return [Error(str(error), hint="See docs/deployment.md, 'Single sign-on'.", id="goldset.E015")]
    return []
