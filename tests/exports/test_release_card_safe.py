"""Issue 35, finding 11: the dataset card carries what people typed (the project's name and description, the
source's name and provenance, label names, guidelines) as text a Markdown renderer shows as itself, never as
HTML, and every text file of a release is served with its charset."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from markdown_it import MarkdownIt

from annotation import services
from annotation.models import Project, Role
from exports.card import CARD_NAME, no_html, plain
from tests.security.hostile import HOSTILE, IMG, SCRIPT, live_problems

pytestmark = pytest.mark.django_db

PIXEL = "![pixel](https://tracker.example/p.png)"
DESCRIPTION = f"""첫 줄 {SCRIPT}
- 목록이 아닌 줄 <iframe src="https://example.org"></iframe>
1. 번호도 아님 {PIXEL} [링크](javascript:alert(20)) <https://example.org/auto>
<div onmouseover="alert(21)">hover</div>"""
#: The tags the card's own Markdown makes (headings, paragraphs, tables, lists, quotes, code, bold).
CARD_TAGS = {"h1", "h2", "h3", "p", "table", "thead", "tbody", "tr", "th", "td", "code", "strong", "ul", "li",
             "blockquote", "hr", "em"}


class Rendered(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def rendered(markdown: str) -> Rendered:
    """The card as a renderer that passes raw HTML through shows it (the Hugging Face Hub's and GitHub's
    renderers do, before their sanitiser): CommonMark with tables and strike-through."""
    html = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(markdown)
    assert live_problems(html) == []
    parsed = Rendered()
    parsed.feed(html)
    parsed.close()
    return parsed


def test_plain_text_renders_as_itself_and_markdown_keeps_its_formatting_but_not_its_html() -> None:
    for text in (HOSTILE, PIXEL, "*굵게* _기울임_ `코드` ~~취소~~ \\<b> &lt;b&gt; # 제목 | 칸", "R&D 1.0.0 <3"):
        page = rendered(f"# {plain(text)}\n\n| a |\n|---|\n| {plain(text).replace('|', chr(92) + '|')} |\n")
        assert page.tags <= {"h1", "table", "thead", "tbody", "tr", "th", "td"}, text
        assert "".join(page.text).count(" ".join(text.split())) == 2, text
    guideline = rendered(no_html(f"- 목록 **굵게** [링크](https://klue-benchmark.com)\n\n{IMG} {SCRIPT}"))
    assert guideline.tags == {"ul", "li", "strong", "a", "p"}
    assert IMG in "".join(guideline.text) and SCRIPT in "".join(guideline.text)


@pytest.fixture
def hostile_release(make_user, api, release_root, tmp_path, django_capture_on_commit_callbacks):
    manager = make_user(can_create=True)
    created = api(manager).post("/api/projects/", {
        "name": f"프로젝트 {HOSTILE}", "slug": "card-xss", "task_type": "tc", "annotators_per_item": 1,
        "description": DESCRIPTION}, format="json")
    assert created.status_code == 201, created.data
    project = Project.objects.get(pk=created.data["id"])
    schema = {**project.label_schema, "labels": [*project.label_schema["labels"], f"라벨 {IMG}"]}
    assert api(manager).patch(f"/api/projects/{project.pk}/", {"label_schema": schema},
                              format="json").status_code == 200
    records = [{"guid": f"ynat-v1_train_{i:05d}", "title": f"제목 {i}번 뉴스 기사", "label": label}
               for i, label in enumerate(["사회", "경제", f"라벨 {IMG}"] * 10)]
    path = tmp_path / f"{IMG}.jsonl"  # the source's provenance names the file
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    out = StringIO()
    call_command("import_items", project.slug, str(path), "--format", "jsonl", "--pii", "off",
                 "--source", f"출처 {SCRIPT}", "--license", "CC-BY-SA-4.0", "--json", stdout=out)
    assert json.loads(out.getvalue())["created"]["items"] == 30
    guideline = services.guideline_create(project=project, instructions="지침", ethics=f"윤리 {SCRIPT}",
                                          pii=f"개인정보 {IMG}", created_by=manager)
    services.guideline_publish(guideline=guideline)
    maintainer = make_user()
    services.membership_set(project=project, user=maintainer, role=Role.MAINTAINER)
    base = f"/api/projects/{project.pk}/releases/"
    with django_capture_on_commit_callbacks(execute=True):
        response = api(manager).post(base, {"version": "1.0.0", "formats": ["klue", "jsonl", "csv", "parquet"]},
                                     format="json")
    assert response.status_code == 202, response.data
    files = api(maintainer).get(f"{base}{response.data['id']}/files/").data
    return {"client": api(maintainer), "base": f"{base}{response.data['id']}/files/", "files": files}


def test_the_card_carries_what_people_typed_as_text_not_html(hostile_release) -> None:
    card = next(f for f in hostile_release["files"] if f["path"] == CARD_NAME)
    download = hostile_release["client"].get(f"{hostile_release['base']}{card['id']}/")
    assert download.status_code == 200
    assert download["Content-Type"] == "text/markdown; charset=utf-8"
    markdown = b"".join(download.streaming_content).decode("utf-8")
    body = markdown[markdown.index("\n---\n", 4) + 5:]
    page = rendered(body)
    assert page.tags <= CARD_TAGS, page.tags - CARD_TAGS
    text = "".join(page.text)
    for typed in (f"프로젝트 {' '.join(HOSTILE.split())}", f"출처 {SCRIPT}", f"imported from {IMG}.jsonl",
                  f"라벨 {IMG}", f"윤리 {SCRIPT}", f"개인정보 {IMG}", "- 목록이 아닌 줄 <iframe",
                  "1. 번호도 아님 ![pixel]"):
        assert typed in text, typed


def test_every_text_file_of_a_release_is_served_with_its_charset(hostile_release) -> None:
    kinds = {}
    for file in hostile_release["files"]:
        response = hostile_release["client"].get(f"{hostile_release['base']}{file['id']}/")
        assert response.status_code == 200
        kinds[Path(file["path"]).suffix] = response["Content-Type"]
    assert kinds == {".md": "text/markdown; charset=utf-8", ".json": "application/json; charset=utf-8",
                     ".jsonl": "application/jsonl; charset=utf-8", ".csv": "text/csv; charset=utf-8",
                     "": "text/plain; charset=utf-8", ".parquet": "application/vnd.apache.parquet"}
