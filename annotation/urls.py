"""Browser pages of the annotation app (namespace ``annotation``), with the agreement and gold pages of
``urls_review``."""

from django.urls import include, path

from . import urls_review, views, views_webhooks
from .sso import views as sso_views

app_name = "annotation"

urlpatterns = [
    path("accounts/login/", sso_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", sso_views.LogoutView.as_view(), name="logout"),
    path("accounts/sso/start/", sso_views.SsoStartView.as_view(), name="sso-start"),
    path("accounts/sso/callback/", sso_views.SsoCallbackView.as_view(), name="sso-callback"),
    path("", views.home, name="home"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("preferences/shortcuts/", views.shortcuts_set, name="shortcuts-set"),
    path("projects/new/", views.project_new, name="project-new"),
    path("projects/<int:project_id>/", views.project_detail, name="project-detail"),
    path("projects/<int:project_id>/guideline/", views.project_guideline, name="project-guideline"),
    path("projects/<int:project_id>/guideline/preview/", views.project_guideline_preview,
         name="project-guideline-preview"),
    path("projects/<int:project_id>/members/", views.project_members, name="project-members"),
    path("projects/<int:project_id>/items/", views.project_items, name="project-items"),
    path("projects/<int:project_id>/guideline/read/", views.guideline_read, name="guideline-read"),
    path("projects/<int:project_id>/annotate/", views.annotate, name="annotate"),
    path("projects/<int:project_id>/audit/", views.project_audit, name="project-audit"),
    path("projects/<int:project_id>/mine/", views.my_submissions, name="my-submissions"),
    path("projects/<int:project_id>/mine/<int:annotation_id>/", views.my_submission_revise,
         name="my-submission-revise"),
    path("projects/<int:project_id>/settings/", views.project_settings, name="project-settings"),
    path("projects/<int:project_id>/settings/assign/", views.project_items_assign, name="project-items-assign"),
    path("projects/<int:project_id>/webhooks/", views_webhooks.project_webhooks, name="project-webhooks"),
    path("", include(urls_review.urlpatterns)),
]
