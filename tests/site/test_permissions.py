"""Walk every API endpoint × method × role and assert the status (see tests/site/matrix.py)."""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from tests.site.matrix import ROLES, Case, contributed_cases, prepared_scenario

CASES: list[Case] = contributed_cases()
METHODS = ("get", "post", "put", "patch", "delete")


def _normalise(route: str) -> str:
    # Routers spell detail ids as <pk> / (?P<pk>[^/.]+); compare them as <pk>.
    route = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"<\1>", route).replace("^", "").replace("$", "")
    return route


def api_routes() -> dict[str, set[str]]:
    """Every route under api/ with the HTTP methods its view answers."""
    found: dict[str, set[str]] = {}

    def walk(patterns, prefix: str) -> None:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern) and route.startswith("api/"):
                callback = pattern.callback
                actions = getattr(callback, "actions", None)
                if actions:
                    methods = {m for m in actions if m in METHODS}
                else:
                    view = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
                    methods = {m for m in METHODS if view is not None and hasattr(view, m)}
                found.setdefault(_normalise(route), set()).update(methods)

    walk(get_resolver().url_patterns, "")
    return found


def test_every_api_route_and_method_is_in_the_matrix():
    covered = {(_normalise(case.route), case.method) for case in CASES}
    missing = sorted((route, method) for route, methods in api_routes().items() for method in methods
                     if (route, method) not in covered)
    assert not missing, f"API routes without a permission-matrix row: {missing}"


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.method.upper()} {c.route}")
def test_permission_matrix(case: Case, role: str, api) -> None:
    scenario = prepared_scenario()
    user = scenario.users[role]
    scenario.extra["username"] = user.username if user else "nobody"
    body = case.body(scenario) if case.body else None
    response = getattr(api(user), case.method)(case.url(scenario), body, format="json")
    expected = case.status_for(role)
    detail = getattr(response, "data", None)
    assert response.status_code == expected, f"{role} {case.method.upper()} {case.url(scenario)}: {detail}"
