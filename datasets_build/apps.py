from django.apps import AppConfig


class DatasetsBuildConfig(AppConfig):
    name = "datasets_build"
    verbose_name = "Dataset building"
    #: The tabs this app adds to every project page (``annotation.tabs``).
    project_tabs = "datasets_build.tabs.PROJECT_TABS"

    def ready(self) -> None:
        # Every item stored one at a time, and every text a writing stage copies into an item, is screened as an
        # import's are (annotation/services/items.py), and a project's PII option is the import's policy
        # (annotation/project_settings.py).
        from annotation.project_settings import pii_policy_register
        from annotation.services import item_screening_register

        from .item_screening import item_screen, writing_screen
        from .pii.pseudonymize import policy_choices, resolve_policy

        item_screening_register(item_screen, writing_screen)
        pii_policy_register(resolve_policy, policy_choices)
