"""The site's error pages (403, 404, 500): in the reader's language, inside the site's frame with its
navigation, saying what to do next. Under /api/ the same errors stay JSON, as the API's own handler gives them.

The 500 page is rendered without the request's context: reading the user or the messages needs the session
and the database, which may be what failed."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template import loader
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.csrf import requires_csrf_token


def _api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


@requires_csrf_token
def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _api(request):
        return JsonResponse({"detail": _("Not found."), "code": "not_found"}, status=404)
    return render(request, "errors/404.html", status=404)


@requires_csrf_token
def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _api(request):
        return JsonResponse({"detail": _("You do not have permission to perform this action."),
                             "code": "permission_denied"}, status=403)
    return render(request, "errors/403.html", {"path": request.get_full_path()}, status=403)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    return render(request, "errors/403.html", {"path": request.get_full_path(), "expired_form": True}, status=403)


def server_error(request: HttpRequest) -> HttpResponse:
    if _api(request):
        return JsonResponse({"detail": _("A server error occurred; the request was not completed."),
                             "code": "server_error"}, status=500)
    page = loader.get_template("errors/500.html").render({"LANGUAGE_CODE": get_language(), "error_page": True})
    return HttpResponse(page, status=500)
