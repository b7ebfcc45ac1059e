from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"
    #: The tabs this app adds to every project page (``annotation.tabs``).
    project_tabs = "annotation.tabs.PROJECT_TABS"

    def ready(self) -> None:
        from django.db.models.signals import post_save

        from .services import tokens_revoke_on_password_change

        post_save.connect(tokens_revoke_on_password_change, sender=self.get_model("User"),
                          dispatch_uid="annotation.tokens_revoke_on_password_change")
