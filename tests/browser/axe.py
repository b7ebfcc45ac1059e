"""axe-core (vendored in tests/browser/vendor/axe.min.js) run in a Playwright page: the serious and critical WCAG 2.x
A/AA violations it finds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

AXE = Path(__file__).with_name("vendor") / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def serious_violations(page: Any) -> list[str]:
    # Evaluated through the DevTools protocol: the page's CSP (rightly) refuses an injected <script>.
    page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate("tags => axe.run(document, {runOnly: {type: 'tag', values: tags}})", TAGS)
    return [f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:5]}"
            for v in result["violations"] if v["impact"] in ("serious", "critical")]
