"""The link between a Goldset user and their account at the identity provider (registered as a model of the
annotation app by ``annotation.models``)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class SsoIdentity(models.Model):
    """The provider's stable id for a person (``iss`` and ``sub``), linked to one Goldset user on their first SSO
    login. Later logins find the user by it alone, whatever the email claim says then."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identities",
                             verbose_name=_("user"))
    issuer = models.CharField(_("issuer"), max_length=255)
    subject = models.CharField(_("subject (sub)"), max_length=255)
    created_at = models.DateTimeField(_("linked at"), auto_now_add=True)
    last_login_at = models.DateTimeField(_("last single sign-on"), null=True, blank=True)

    class Meta:
        verbose_name = _("SSO identity")
        verbose_name_plural = _("SSO identities")
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"], name="sso_identity_unique_subject")]

    def __str__(self) -> str:
        return f"{self.user} at {self.issuer}"
