from django.apps import AppConfig


class DatasetsBuildConfig(AppConfig):
    name = "datasets_build"
    verbose_name = "Dataset building"
