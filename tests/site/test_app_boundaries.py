"""Each app owns its URLs (a namespace), its project tabs and no settings of its own: every setting is
declared in config/settings.py."""

from __future__ import annotations

import ast
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


# -- services for writes, selectors for reads ------------------------------------------------------------------

#: Model and queryset methods that write.
ORM_WRITES = {"save", "create", "update", "delete", "bulk_create", "bulk_update", "get_or_create", "update_or_create"}
#: Names in a call's receiver that make it the ORM's (``X.objects…``, ``….filter(…)``): ``update`` and ``create``
#: are dict and DRF-view methods too.
QUERYSET_MARKS = {"objects", "filter", "exclude", "all", "select_related", "prefetch_related", "only", "defer",
                  "annotate", "order_by", "select_for_update", "distinct", "values", "values_list", "using"}


def _receiver(node: ast.expr) -> list[str]:
    """The names along a call's receiver: ``Token.objects.filter(user=u)`` → filter, objects, Token."""
    names: list[str] = []
    while True:
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Attribute):
            names.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            if isinstance(node, ast.Name):
                names.append(node.id)
            return names


def orm_writes(source: str) -> list[str]:
    """Every ORM write a module makes itself, as ``line: receiver.method``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ORM_WRITES):
            continue
        receiver = _receiver(node.func.value)
        if receiver == ["super"]:
            continue  # a DRF view's create() calling its parent's
        if node.func.attr in {"create", "update"} and not QUERYSET_MARKS & set(receiver):
            continue  # dict.update, a context's update
        found.append(f"{node.lineno}: {'.'.join(reversed(receiver))}.{node.func.attr}")
    return found


def _is_services(module: str) -> bool:
    """``services``, or a concern's ``…_services`` (``suggester_services``, ``batch_services``)."""
    return any(part == "services" or part.endswith("_services") for part in module.split("."))


def services_imported(source: str) -> list[str]:
    """Every services module a module imports (a selector that calls one writes through it)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
            [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
        if isinstance(node, ast.ImportFrom):
            modules += [f"{node.module or ''}.{alias.name}" for alias in node.names]
        found += [f"{node.lineno}: {m}" for m in modules if _is_services(m)]
    return found


#: DRF's generic writes: a view built on these saves or deletes through its serializer or model unless it says
#: otherwise (one of the named methods).
DRF_WRITES = {"CreateModelMixin": ("create", "perform_create"), "UpdateModelMixin": ("update", "perform_update"),
              "DestroyModelMixin": ("destroy", "perform_destroy")}


def drf_default_writes(source: str) -> list[str]:
    """Every DRF view that would leave a write to DRF's own ``serializer.save()`` / ``instance.delete()``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        bases = {base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "") for base in node.bases}
        mixins = set(DRF_WRITES) if "ModelViewSet" in bases else bases & set(DRF_WRITES)
        defined = {item.name for item in node.body if isinstance(item, ast.FunctionDef)}
        found += [f"{node.name}: {mixin}" for mixin in sorted(mixins) if not defined & set(DRF_WRITES[mixin])]
    return found


def _selector_modules() -> list[Path]:
    """Every app's ``selectors.py`` and a concern's ``…_selectors.py``."""
    return sorted(path for app in APPS for path in (ROOT / app).rglob("*selectors.py"))


def _caller_modules() -> list[Path]:
    """The modules that call services rather than write: pages, API views, forms, tasks, commands, the assist
    modules (which decide and compute) and the demo."""
    paths: set[Path] = set()
    for app in APPS:
        base = ROOT / app
        for pattern in ("views*.py", "api*.py", "api/*.py", "forms.py", "tasks.py", "assist.py",
                        "management/commands/*.py"):
            paths.update(base.glob(pattern))
    paths.update((ROOT / "demo").rglob("*.py"))
    return sorted(path for path in paths if "migrations" not in path.parts)


def test_selectors_only_read() -> None:
    modules = _selector_modules()
    assert {path.relative_to(ROOT).as_posix() for path in modules} >= {
        "annotation/selectors.py", "annotation/gold/selectors.py", "datasets_build/selectors.py",
        "datasets_build/batch_selectors.py", "exports/selectors.py"}
    for path in modules:
        source = path.read_text(encoding="utf-8")
        assert not orm_writes(source), (path.relative_to(ROOT).as_posix(), orm_writes(source))
        assert not services_imported(source), (path.relative_to(ROOT).as_posix(), services_imported(source))


def test_pages_api_tasks_commands_and_assist_write_through_services() -> None:
    modules = _caller_modules()
    names = {path.relative_to(ROOT).as_posix() for path in modules}
    assert {"annotation/api/views.py", "annotation/api/authentication.py", "annotation/assist.py",
            "exports/assist.py", "exports/api_assist.py", "demo/management/commands/demo.py"} <= names
    for path in modules:
        source = path.read_text(encoding="utf-8")
        assert not orm_writes(source), (path.relative_to(ROOT).as_posix(), orm_writes(source))
        assert not drf_default_writes(source), (path.relative_to(ROOT).as_posix(), drf_default_writes(source))


def test_the_write_finder_sees_the_writes_it_looks_for() -> None:
    # Guards the two tests above against a finder that finds nothing.
    source = ("def f(project, token, context):\n"
              "    Token.objects.filter(user=token.user).delete()\n"
              "    Suggestion.objects.filter(item__project=project).update(is_current=False)\n"
              "    token.save()\n"
              "    context.update({'a': 1})\n"
              "    return super().create(project)\n"
              "def g():\n"
              "    from .services import gold_compute\n")
    assert orm_writes(source) == ["2: Token.objects.filter.delete", "3: Suggestion.objects.filter.update",
                                  "4: token.save"]
    assert services_imported(source) == ["8: services", "8: services.gold_compute"]
    assert services_imported("from annotation import services\nimport exports.services\n") == [
        "1: annotation.services", "2: exports.services"]
    assert services_imported("from .batch_services import bands_write\nfrom exports import suggester_services\n"
                             "from .selectors import services_report\n") == [
        "1: batch_services", "1: batch_services.bands_write", "2: exports.suggester_services"]
    views = ("class A(viewsets.ModelViewSet):\n    def perform_create(self, s): ...\n"
             "class B(mixins.CreateModelMixin, GenericViewSet):\n    def create(self, r): ...\n")
    assert drf_default_writes(views) == ["A: DestroyModelMixin", "A: UpdateModelMixin"]


#: Managers through which a module reads a model's rows itself.
MANAGERS = {"objects", "_default_manager", "_base_manager"}
#: Shortcuts that read a model's rows when handed the model class rather than a selector's queryset.
SHORTCUTS = {"get_object_or_404", "get_list_or_404"}


def direct_reads(source: str) -> list[str]:
    """Every read a module makes past the selectors, as ``line: what``: a model manager (``X.objects…``, except
    ``.none()``, which runs no query: DRF's schema generation asks for it) and ``get_object_or_404(Model, …)``.
    ``get_object_or_404(selectors.x(project), pk=…)`` is the pattern: the selector scopes the rows (the project,
    the caller's own), the view only picks one by id."""
    tree = ast.parse(source)
    parent = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in MANAGERS:
            after = parent.get(node)
            if not (isinstance(after, ast.Attribute) and after.attr == "none"):
                found.append(f"{node.lineno}: {'.'.join(reversed(_receiver(node)))}")
        elif isinstance(node, ast.Call) and node.args and (
                getattr(node.func, "id", None) in SHORTCUTS or getattr(node.func, "attr", None) in SHORTCUTS):
            model = node.args[0]
            if isinstance(model, ast.Name | ast.Attribute) and _receiver(model)[0][:1].isupper():
                found.append(f"{node.lineno}: {'.'.join(reversed(_receiver(node.func)))}({_receiver(model)[0]})")
    return sorted(found, key=lambda line: int(line.split(":")[0]))


def _page_and_api_modules() -> list[Path]:
    """The pages, the API views, the forms they validate with and the management commands. (The assist modules
    and the demo's simulated annotators still read models themselves: docs/ARCHITECTURE.md lists them.)"""
    paths: set[Path] = set()
    for app in APPS:
        for pattern in ("views*.py", "api*.py", "api/*.py", "forms.py", "management/commands/*.py"):
            paths.update((ROOT / app).glob(pattern))
    return sorted(paths)


def test_pages_api_and_commands_read_through_selectors() -> None:
    modules = _page_and_api_modules()
    assert {"annotation/views.py", "annotation/views_review.py", "annotation/api/views.py",
            "annotation/api/views_agreement.py", "exports/views.py", "exports/api.py", "exports/api_assist.py",
            "datasets_build/views.py", "datasets_build/api.py", "exports/management/commands/publish_release.py",
            "demo/management/commands/demo.py"} <= {p.relative_to(ROOT).as_posix() for p in modules}
    for path in modules:
        reads = direct_reads(path.read_text(encoding="utf-8"))
        assert not reads, (path.relative_to(ROOT).as_posix(), reads)


def test_the_read_finder_sees_the_reads_it_looks_for() -> None:
    # Guards the test above against a finder that finds nothing (or too much).
    source = ("def f(self, project, item_id, qs):\n"
              "    Membership.objects.filter(project=project).select_related('user')\n"
              "    get_object_or_404(Item, pk=item_id, project=project)\n"
              "    shortcuts.get_object_or_404(models.Release, pk=1)\n"
              "    self.serializer_class.Meta.model.objects.none()\n"
              "    get_object_or_404(selectors.items_in(project), pk=item_id)\n"
              "    get_object_or_404(qs, pk=item_id)\n"
              "    return Item._default_manager.count()\n")
    assert direct_reads(source) == ["2: Membership.objects", "3: get_object_or_404(Item)",
                                    "4: shortcuts.get_object_or_404(Release)", "8: Item._default_manager"]
