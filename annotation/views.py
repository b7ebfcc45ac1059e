"""Browser pages: thin views over selectors and services."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from . import selectors


@login_required
def home(request: HttpRequest) -> HttpResponse:
    projects = selectors.projects_for_user(request.user)
    rows = [{"project": p, "role": selectors.role_in_project(request.user, p)} for p in projects]
    return render(request, "annotation/home.html", {"rows": rows})
