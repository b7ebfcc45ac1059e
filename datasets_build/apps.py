from django.apps import AppConfig


class DatasetsBuildConfig(AppConfig):
    name = "datasets_build"
    verbose_name = "Dataset building"
    #: The tabs this app adds to every project page (``annotation.tabs``).
    project_tabs = "datasets_build.tabs.PROJECT_TABS"

    def ready(self) -> None:
        # Every item stored one at a time is screened as an import's are (annotation/services/items.py).
        from annotation.services import item_screening_register

        from .item_screening import item_screen

        item_screening_register(item_screen)
