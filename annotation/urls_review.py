"""Manager pages of agreement, gold and adjudication (included by ``annotation.urls``, in its namespace)."""

from django.urls import path

from . import views_review as views

urlpatterns = [
    path("projects/<int:project_id>/agreement/", views.dashboard, name="review-dashboard"),
    path("projects/<int:project_id>/agreement/agreement.csv", views.agreement_csv, name="review-csv"),
    path("projects/<int:project_id>/agreement/items/", views.items, name="review-items"),
    path("projects/<int:project_id>/agreement/items/<int:item_id>/", views.item_detail, name="review-item"),
    path("projects/<int:project_id>/agreement/items/<int:item_id>/adjudicate/", views.adjudicate,
         name="review-adjudicate"),
    path("projects/<int:project_id>/agreement/next/", views.next_to_adjudicate, name="review-next"),
    path("projects/<int:project_id>/gold/", views.gold, name="review-gold"),
    path("projects/<int:project_id>/gold/compute/", views.gold_compute, name="review-gold-compute"),
]
