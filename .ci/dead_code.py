"""Dead-code check (the CI's lint step): vulture over the apps and the benchmarks, reporting unused functions,
properties, imports and unreachable code.

Unused classes, methods and class attributes are not reported: Django and DRF reach them by name (admin
options, model fields, ``Meta``, ``get``/``post``, management ``Command``), so vulture cannot see them used.
Functions reached only by name or type (template filters, Celery tasks, signal receivers, settings strings,
the review pages' renderings dispatched on the measure's class) carry a decorator named below or stand in
``.ci/vulture_whitelist.py`` with the reason; gunicorn's hooks are named in ``IGNORE_NAMES``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from vulture import Vulture

ROOT = Path(__file__).resolve().parent.parent
PATHS = ["annotation", "datasets_build", "exports", "config", "demo", "bench", ".ci/vulture_whitelist.py"]
IGNORE_DECORATORS = ["@register.filter", "@register.simple_tag", "@shared_task", "@receiver", "@admin.*",
                     "@payload_html.register", "@payload_summary.register"]
REPORTED = {"function", "property", "import", "unreachable_code"}
#: Hooks a server reads from its configuration file by name (config/gunicorn.conf.py is not a module to import).
IGNORE_NAMES = ["post_worker_init"]


def main() -> int:
    vulture = Vulture(ignore_decorators=IGNORE_DECORATORS, ignore_names=IGNORE_NAMES)
    vulture.scavenge([str(ROOT / path) for path in PATHS], exclude=["*/migrations/*"])
    dead = [item for item in vulture.get_unused_code(min_confidence=60) if item.typ in REPORTED]
    for item in dead:
        print(item.get_report())
    return 1 if dead else 0


if __name__ == "__main__":
    sys.exit(main())
