from django.apps import AppConfig


class DatasetsBuildConfig(AppConfig):
    name = "datasets_build"
    verbose_name = "Dataset building"
    #: The tabs this app adds to every project page (``annotation.tabs``).
    project_tabs = "datasets_build.tabs.PROJECT_TABS"
