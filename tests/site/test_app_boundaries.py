"""Each app owns its URLs (a namespace), its project tabs and no settings of its own: every setting is
declared in config/settings.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotation.models import Role
from annotation.tabs import all_project_tabs

ROOT = Path(__file__).resolve().parents[2]
APPS = ("annotation", "datasets_build", "exports", "demo")
#: Named routes that belong to no app of ours.
NOT_OURS = {"healthz", "set_language"}


def _named_routes() -> list[tuple[str, str]]:
    """(namespace, name) of every named route outside the admin."""
    found: list[tuple[str, str]] = []

    def walk(patterns: list, namespace: str) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                if pattern.namespace != "admin":
                    walk(pattern.url_patterns, pattern.namespace or namespace)
            elif isinstance(pattern, URLPattern) and pattern.name:
                found.append((namespace, pattern.name))

    walk(get_resolver().url_patterns, "")
    return found


def test_every_route_of_ours_is_in_its_apps_namespace() -> None:
    routes = _named_routes()
    assert {name for namespace, name in routes if not namespace} == NOT_OURS
    assert {namespace for namespace, _ in routes} - {""} == {"annotation", "api", "datasets_build", "exports"}


def test_annotation_templates_name_no_other_apps_urls() -> None:
    for template in (ROOT / "annotation" / "templates").rglob("*.html"):
        text = template.read_text(encoding="utf-8")
        for name in re.findall(r"""\{%\s*url\s+["']([^"']+)["']""", text):
            assert name in NOT_OURS or name.split(":")[0] in {"annotation", "api", "admin"}, (template.name, name)


def test_each_app_contributes_its_project_tabs() -> None:
    by_app = {config.name: [tab.url_name for tab in __import__(f"{config.name}.tabs", fromlist=["x"]).PROJECT_TABS]
              for config in apps.get_app_configs() if getattr(config, "project_tabs", None)}
    assert set(by_app) == {"annotation", "datasets_build", "exports"}
    for app, names in by_app.items():
        assert all(name.startswith(f"{app}:") for name in names), app
    orders = [tab.order for tab in all_project_tabs()]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)


@pytest.mark.django_db
@pytest.mark.parametrize(("role", "shown", "hidden"), [
    (Role.MANAGER, ["exports:release-list", "datasets_build:project-import", "annotation:project-audit"],
     ["annotation:annotate"]),
    (Role.MAINTAINER, ["exports:release-list", "datasets_build:project-sources", "annotation:review-gold"],
     ["datasets_build:project-import", "annotation:project-audit", "annotation:annotate"]),
    (Role.ANNOTATOR, ["annotation:annotate", "annotation:guideline-read"],
     ["exports:release-list", "datasets_build:project-sources", "annotation:project-items"]),
])
def test_the_project_page_shows_the_tabs_of_every_app_by_role(make_project, make_user, add_member, client, role,
                                                              shown, hidden) -> None:
    project = make_project("tc")
    user = make_user(f"tabs-{role}")
    add_member(project, user, role)
    client.force_login(user)
    page = client.get(reverse("annotation:project-detail", args=[project.pk])).content.decode()
    nav = page.split('<nav class="tabs">')[1].split("</nav>")[0]
    for name in shown:
        assert f'href="{reverse(name, args=[project.pk])}"' in nav, name
    for name in hidden:
        assert f'href="{reverse(name, args=[project.pk])}"' not in nav, name
    assert 'class="active"' in nav.split(reverse("annotation:project-detail", args=[project.pk]))[1].split("<a")[0]


def _sources() -> list[Path]:
    """The Python the Django processes run (gunicorn's own configuration file, read by gunicorn before Django
    starts, is not among it)."""
    return [path for app in (*APPS, "config") for path in (ROOT / app).rglob("*.py")
            if "migrations" not in path.parts and not path.name.startswith("settings")
            and path.name != "gunicorn.conf.py"]


def test_every_setting_read_is_declared_in_config_settings() -> None:
    declared = set(re.findall(r"^([A-Z][A-Z0-9_]+) *[:=]", (ROOT / "config" / "settings.py").read_text(), re.M))
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        assert "getattr(settings" not in text, f"{path}: a setting with a default outside config/settings.py"
        assert not re.search(r"os\.environ(?!\.setdefault\(\"DJANGO_SETTINGS_MODULE\")|os\.getenv", text), \
            f"{path}: reads the environment outside config/settings.py"
        for name in re.findall(r"\bsettings\.(GOLDSET_[A-Z0-9_]+)", text):
            assert name in declared and hasattr(settings, name), f"{path}: {name} is not in config/settings.py"
