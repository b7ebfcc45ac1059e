"""The datasets_build app's routes (namespace ``datasets_build``): its pages and, under
``api/projects/<id>/``, its project-scoped API (``api_urls``)."""

from django.urls import include, path

from . import api_urls, views

app_name = "datasets_build"

urlpatterns = [
    path("projects/<int:project_id>/import/", views.project_import, name="project-import"),
    path("projects/<int:project_id>/review/", views.project_review, name="project-review"),
    path("projects/<int:project_id>/sources/", views.project_sources, name="project-sources"),
    path("api/projects/<int:project_pk>/", include(api_urls.urlpatterns)),
]
