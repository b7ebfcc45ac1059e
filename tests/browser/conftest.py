"""Browser fixtures: one headless Debian Chromium for the run of browser tests, a fresh context per test.

The tests skip cleanly when /usr/bin/chromium is absent. Playwright's sync API runs an event loop in
the test thread, so while it runs Django's async-safety check has to be told that ORM calls there are
fine (``DJANGO_ALLOW_ASYNC_UNSAFE``). Chromium and that setting live only from the first browser test
to the last one: the tests after them (and the subprocesses they start) see neither.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from annotation import services
from annotation.models import Item, Project, Role, User
from annotation.task_types import get_task_type
from tests.exports.release_history import history, planted  # noqa: F401 (fixtures of the release diff page)

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "demo" / "corpus"
SCREENSHOTS = ROOT / "docs" / "screenshots"
PASSWORD = "pw-goldset-123"


class _Chromium:
    """The running Playwright and browser, started by the first browser test, stopped after the last."""

    playwright: Any = None
    browser: Any = None
    async_unsafe: str | None = None

    @classmethod
    def start(cls) -> Any:
        if cls.browser is None:
            from playwright.sync_api import sync_playwright

            cls.async_unsafe = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
            cls.playwright = sync_playwright().start()
            cls.browser = cls.playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        return cls.browser

    @classmethod
    def stop(cls) -> None:
        if cls.browser is None:
            return
        cls.browser.close()
        cls.playwright.stop()
        cls.browser = cls.playwright = None
        if cls.async_unsafe is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = cls.async_unsafe


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    yield  # the test's fixtures (page, database flush) are torn down while Playwright still runs
    if nextitem is None or nextitem.get_closest_marker("browser") is None:
        _Chromium.stop()


@pytest.fixture
def browser() -> Any:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    return _Chromium.start()


@pytest.fixture
def locale() -> str:
    """The browser's language; a test parametrizes ``locale`` to see the pages in Korean."""
    return "en-US"


@pytest.fixture
def page(browser: Any, live_server: Any, locale: str) -> Iterator[Any]:
    context = browser.new_context(base_url=live_server.url, locale=locale,
                                  viewport={"width": 1280, "height": 860})
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.set_default_navigation_timeout(30_000)  # the first request of a session warms the server up
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    # A blocked script, style or request (e.g. by the Content Security Policy) shows up as a console error.
    page.on("console", lambda message: errors.append(message.text)
            if message.type == "error" and "Content Security Policy" in message.text else None)
    yield page
    # Nothing may reach the server after the test: the pagehide autosave would hit a flushed database.
    context.route("**/*", lambda route: route.abort())
    page.goto("about:blank")
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def demo_records(task: str) -> list[dict[str, Any]]:
    with open(CORPUS / f"{task}.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def demo_schema(task: str) -> dict[str, Any]:
    schema = get_task_type(task).default_schema()
    ontology = CORPUS / f"{task}_ontology.json"
    if ontology.exists():  # as the demo command does: the demo dialogues use their own ontology
        schema["ontology"] = json.loads(ontology.read_text(encoding="utf-8"))
    return schema


@dataclass
class Seeded:
    project: Project
    annotator: User
    items: list[Item]


@pytest.fixture
def seed(django_user_model: type[User]) -> Callable[..., Seeded]:
    """A project of the task type with items from the demo corpus and one annotator (not yet acknowledged).

    ``records`` picks corpus records (default: the first two); ``payloads`` gives item payloads directly.
    """

    def make(task: str, *, records: list[dict[str, Any]] | None = None,
             payloads: list[dict[str, Any]] | None = None, k: int = 1, schema: dict[str, Any] | None = None,
             username: str = "annotator") -> Seeded:
        manager = django_user_model.objects.create_user(f"manager-{task}", password=PASSWORD)
        project = services.project_create(name=f"Demo {task}", slug=f"demo-{task}", task_type=task,
                                          created_by=manager, annotators_per_item=k,
                                          label_schema=schema or demo_schema(task))
        annotator = django_user_model.objects.create_user(username, password=PASSWORD)
        services.membership_set(project=project, user=annotator, role=Role.ANNOTATOR)
        task_type = get_task_type(task)
        if payloads is None:
            payloads = [task_type.parse_record(r).payload for r in (records or demo_records(task)[:2])]
        items = [services.item_create(project=project, payload=p, external_id=f"{task}-{i}")
                 for i, p in enumerate(payloads)]
        return Seeded(project, annotator, items)

    return make


def sign_in(page: Any, username: str, path: str) -> None:
    """Open ``path``, sign in on the login page it redirects to, and wait until ``path`` is shown."""
    page.goto(path)
    page.locator("[name=username]").fill(username)
    page.locator("[name=password]").fill(PASSWORD)
    page.locator("[name=password]").press("Enter")
    page.wait_for_url(f"**{path}")


def sign_in_and_acknowledge(page: Any, seeded: Seeded) -> None:
    """Log in by keyboard, pass the guideline gate, land in the workspace with the first item shown."""
    page.goto(f"/projects/{seeded.project.pk}/annotate/")
    assert "/accounts/login/" in page.url
    page.locator("[name=username]").focus()  # by name: the label is in the browser's language
    page.keyboard.type(seeded.annotator.username)
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url("**/guideline/read/**")
    for section in ("instructions", "ethics", "pii"):
        assert page.locator(f".section-{section} .markdown").inner_text().strip()
    page.locator("#ack-confirm").focus()
    page.keyboard.press("Space")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/projects/{seeded.project.pk}/annotate/")
    page.wait_for_selector(".widget[data-item]")
    settle(page)


def settle(page: Any) -> None:
    """Wait until the workspace has no request in flight and no autosave scheduled.

    The tests read the database between browser actions; on SQLite's shared in-memory test database a
    read that overlaps a live-server write fails with "database table is locked", so they wait first.
    """
    page.wait_for_function("() => document.getElementById('workspace')?.dataset.busy === '0'")


def shown_item(page: Any) -> int:
    return int(page.locator(".widget[data-item]").get_attribute("data-item"))


def screenshot(page: Any, slug: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#workspace").screenshot(path=str(SCREENSHOTS / f"{slug}.png"))


def submit_and_reload(page: Any, key: str = "Enter") -> int:
    """Submit with the keyboard, wait for the next item, reload, and return the item shown after it."""
    before = shown_item(page)
    page.keyboard.press(key)
    page.wait_for_function(
        "before => { const w = document.querySelector('.widget[data-item]');"
        " return (w && Number(w.dataset.item) !== before) || document.getElementById('ws-empty'); }",
        arg=before)
    page.reload()
    page.wait_for_selector(".widget[data-item], #ws-empty")
    settle(page)
    return shown_item(page) if page.locator(".widget[data-item]").count() else 0


AXE = Path(__file__).with_name("vendor") / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def serious_violations(page: Any) -> list[str]:
    # Evaluated through the DevTools protocol: the page's CSP (rightly) refuses an injected <script>.
    page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate("tags => axe.run(document, {runOnly: {type: 'tag', values: tags}})", TAGS)
    return [f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:5]}"
            for v in result["violations"] if v["impact"] in ("serious", "critical")]
