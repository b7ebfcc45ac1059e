"""Browser pages of this app."""

from django.urls import path

from . import views

urlpatterns = [
    path("projects/<int:project_id>/import/", views.project_import, name="project-import"),
    path("projects/<int:project_id>/review/", views.project_review, name="project-review"),
    path("projects/<int:project_id>/sources/", views.project_sources, name="project-sources"),
]
