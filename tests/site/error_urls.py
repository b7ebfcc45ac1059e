"""The site's URLs plus views that fail, for the error page tests (``test_error_pages.py``)."""

from django.http import HttpRequest, HttpResponse
from django.urls import path

from config.urls import handler403, handler404, handler500
from config.urls import urlpatterns as site_urlpatterns

__all__ = ["handler403", "handler404", "handler500", "urlpatterns"]


def broken(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug")


urlpatterns = [
    path("broken/", broken),
    path("api/broken/", broken),
    *site_urlpatterns,
]
