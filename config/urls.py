from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("annotation.api.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("", include("annotation.urls")),
]
