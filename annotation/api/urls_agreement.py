"""Project-scoped API routes of agreement, gold and adjudication (included by ``annotation.api.urls``
under projects/<id>/, in the ``api`` namespace)."""

from django.urls import path

from . import views_agreement as views

urlpatterns = [
    path("agreement/", views.AgreementView.as_view(), name="agreement"),
    path("agreement/csv/", views.AgreementCsvView.as_view(), name="agreement-csv"),
    path("agreement/annotators/", views.AnnotatorQualityView.as_view(), name="agreement-annotators"),
    path("agreement/items/", views.DisagreementView.as_view(), name="agreement-items"),
    path("gold/", views.GoldListView.as_view(), name="gold-list"),
    path("gold/<int:item_pk>/adjudicate/", views.AdjudicateView.as_view(), name="gold-adjudicate"),
    path("gold/<int:item_pk>/known/", views.KnownAnswerView.as_view(), name="gold-known"),
]
