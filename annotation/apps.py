from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"
    #: The tabs this app adds to every project page (``annotation.tabs``).
    project_tabs = "annotation.tabs.PROJECT_TABS"

    def ready(self) -> None:
        from django.core import checks
        from django.db.models.signals import post_save

        from config import oidc
        from config.checks import proxy_trust

        from .services import tokens_revoke_on_password_change
        from .sso.checks import role_map

        checks.register(proxy_trust, checks.Tags.security, deploy=True)
        checks.register(oidc.configuration, checks.Tags.security)
        checks.register(role_map, checks.Tags.security)
        checks.register(oidc.deployment, checks.Tags.security, deploy=True)

        post_save.connect(tokens_revoke_on_password_change, sender=self.get_model("User"),
                          dispatch_uid="annotation.tokens_revoke_on_password_change")
