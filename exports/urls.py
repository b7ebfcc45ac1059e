"""The exports app's routes (namespace ``exports``): its pages and, under ``api/projects/<id>/``, its project-scoped
API (``api_urls``)."""

from django.urls import include, path

from . import api_urls, views, views_contamination, views_diff

app_name = "exports"

urlpatterns = [
    path("projects/<int:project_id>/releases/", views.release_list, name="release-list"),
    path("projects/<int:project_id>/suggester/", views.suggester, name="suggester"),
    path("projects/<int:project_id>/releases/<int:release_id>/", views.release_detail, name="release-detail"),
    path("projects/<int:project_id>/releases/<int:release_id>/diff/", views_diff.release_diff, name="release-diff"),
    path("projects/<int:project_id>/releases/<int:release_id>/contamination/", views_contamination.check,
         name="release-contamination-check"),
    path("projects/<int:project_id>/releases/references/", views_contamination.references,
         name="contamination-references"),
    path("projects/<int:project_id>/items/<int:item_id>/provenance/", views_contamination.provenance,
         name="item-provenance"),
    path("projects/<int:project_id>/releases/<int:release_id>/publish/", views.release_publish,
         name="release-publish"),
    path("projects/<int:project_id>/releases/<int:release_id>/verify/", views.release_verify,
         name="release-verify"),
    path("projects/<int:project_id>/releases/<int:release_id>/archive/", views.release_archive,
         name="release-archive"),
    path("projects/<int:project_id>/releases/<int:release_id>/files/<int:file_id>/", views.release_file,
         name="release-file"),
    path("api/projects/<int:project_pk>/", include(api_urls.urlpatterns)),
]
