"""Project-scoped API routes of this app (included by ``urls.py`` under
``api/projects/<int:project_pk>/``, in the app's namespace)."""

from django.urls import path

from . import api

urlpatterns = [
    path("imports/", api.ImportListView.as_view(), name="api-imports"),
    path("imports/<int:pk>/", api.ImportDetailView.as_view(), name="api-import-detail"),
    path("sources/", api.SourceListView.as_view(), name="api-sources"),
    path("pii-report/", api.PiiReportView.as_view(), name="api-pii-report"),
    path("near-duplicates/", api.NearDuplicateListView.as_view(), name="api-near-duplicates"),
    path("screening-review/", api.ReviewQueueView.as_view(), name="api-screening-review"),
    path("screening-review/<int:item_pk>/", api.ReviewDecisionView.as_view(), name="api-screening-decision"),
]
