from django.contrib import admin
from django.urls import include, path

from config import errors
from config.health import healthz

# One namespace per app (its urls module's ``app_name``): ``annotation`` (pages), ``api`` (the annotation app's
# REST API), ``datasets_build`` and ``exports`` (each app's pages and its API under /api/projects/<id>/).
urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("", include("datasets_build.urls")),
    path("", include("exports.urls")),
    path("api/", include("annotation.api.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("", include("annotation.urls")),
]

# Pages in the reader's language inside the site's frame; JSON under /api/ (config/errors.py).
handler403 = errors.permission_denied
handler404 = errors.page_not_found
handler500 = errors.server_error
