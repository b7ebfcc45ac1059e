from django.contrib import admin
from django.urls import include, path

from config.health import healthz

# Each app owns its project-scoped API routes; they all live under /api/projects/<id>/.
project_api = [
    path("", include("annotation.api.urls_agreement")),
    path("", include("datasets_build.api_urls")),
    path("", include("exports.api_urls")),
]

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/projects/<int:project_pk>/", include(project_api)),
    path("api/", include("annotation.api.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("", include("datasets_build.urls")),
    path("", include("exports.urls")),
    path("", include("annotation.urls_review")),
    path("", include("annotation.urls")),
]
