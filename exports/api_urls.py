"""Project-scoped API routes of releases (included by ``urls.py`` under
``api/projects/<int:project_pk>/``, in the app's namespace)."""

from django.urls import path

from . import api, api_assist, api_contamination

urlpatterns = [
    path("releases/", api.ReleaseListView.as_view(), name="api-releases"),
    path("releases/<int:pk>/", api.ReleaseDetailView.as_view(), name="api-release-detail"),
    path("releases/<int:pk>/files/", api.ReleaseFilesView.as_view(), name="api-release-files"),
    path("releases/<int:pk>/files/<int:file_pk>/", api.ReleaseFileDownloadView.as_view(),
         name="api-release-file-download"),
    path("releases/<int:pk>/archive/", api.ReleaseArchiveView.as_view(), name="api-release-archive"),
    path("releases/<int:pk>/diff/<int:other>/", api.ReleaseDiffView.as_view(), name="api-release-diff"),
    path("releases/<int:pk>/contamination/", api_contamination.ReleaseContaminationView.as_view(),
         name="api-release-contamination"),
    path("contamination/references/", api_contamination.ReferenceListView.as_view(),
         name="api-contamination-references"),
    path("contamination/references/<int:pk>/", api_contamination.ReferenceDetailView.as_view(),
         name="api-contamination-reference"),
    path("items/<int:item_pk>/provenance/", api_contamination.ItemProvenanceView.as_view(),
         name="api-item-provenance"),
    path("raters/", api.RaterIdsView.as_view(), name="api-rater-ids"),
    path("releases/<int:pk>/verify/", api.ReleaseVerifyView.as_view(), name="api-release-verify"),
    path("releases/<int:pk>/publish/", api.ReleasePublishView.as_view(), name="api-release-publish"),
    path("suggester/", api_assist.SuggesterView.as_view(), name="api-suggester"),
    path("suggester/train/", api_assist.SuggesterTrainView.as_view(), name="api-suggester-train"),
    path("suggester/predictions/", api_assist.SuggesterUploadView.as_view(), name="api-suggester-upload"),
    path("suggester/runs/", api_assist.SuggesterRunListView.as_view(), name="api-suggester-runs"),
    path("suggester/runs/<int:pk>/", api_assist.SuggesterRunDetailView.as_view(), name="api-suggester-run"),
]
