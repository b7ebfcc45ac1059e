"""Hostile text planted on every page, and the checker that finds markup of it still live in a page."""

from __future__ import annotations

from html.parser import HTMLParser

SCRIPT = "<script>alert(1)</script>"
IMG = '<img src=x onerror="alert(2)">'
LINK = '<a href="javascript:alert(3)" onclick="alert(4)">click</a>'
SVG = "<svg onload=alert(5)></svg>"
HOSTILE = f"{SCRIPT} {IMG} {LINK} {SVG} \"'><script>alert(6)</script>"
GUIDELINE = f"""# 지침 {SCRIPT}

[여기를 누르세요](javascript:alert(7)) and [also](JaVaScRiPt:alert(8)) and <javascript:alert(9)>

{IMG}

{LINK}

<div onmouseover="alert(10)">hover</div> {SVG}
"""


class LiveHtml(HTMLParser):
    """Collects whatever in a page could run script."""

    URL_ATTRIBUTES = frozenset({"href", "src", "action", "formaction", "data", "xlink:href", "srcdoc"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self._in_script = self._in_json = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # A JSON data block (json_script) never runs; its text must still not be able to close the element.
        self._in_json = tag == "script" and dict(attrs).get("type") == "application/json"
        self._in_script = tag == "script" and not self._in_json
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}={value!r}>")
            squeezed = "".join((value or "").split()).lower()
            if name in self.URL_ATTRIBUTES and squeezed.startswith(("javascript:", "vbscript:", "data:text/html")):
                self.problems.append(f"<{tag} {name}={value!r}>")
        if tag in {"iframe", "object", "embed"}:
            self.problems.append(f"<{tag}>")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = self._in_json = False

    def handle_data(self, data: str) -> None:
        if self._in_json and "<" in data:
            self.problems.append(f"<script type=application/json>{data[:80]}")
        if self._in_script and "alert(" in data:
            self.problems.append(f"<script>{data[:80]}")


def live_problems(html: str) -> list[str]:
    parser = LiveHtml()
    parser.feed(html)
    parser.close()
    return parser.problems
