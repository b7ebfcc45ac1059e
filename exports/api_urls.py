"""Project-scoped API routes of releases (included under ``api/projects/<int:project_pk>/``)."""

from django.urls import path

from . import api

urlpatterns = [
    path("releases/", api.ReleaseListView.as_view(), name="api-releases"),
    path("releases/<int:pk>/", api.ReleaseDetailView.as_view(), name="api-release-detail"),
    path("releases/<int:pk>/files/", api.ReleaseFilesView.as_view(), name="api-release-files"),
    path("releases/<int:pk>/files/<int:file_pk>/", api.ReleaseFileDownloadView.as_view(),
         name="api-release-file-download"),
    path("releases/<int:pk>/verify/", api.ReleaseVerifyView.as_view(), name="api-release-verify"),
    path("releases/<int:pk>/publish/", api.ReleasePublishView.as_view(), name="api-release-publish"),
]
