"""Production settings: the same module with ``DJANGO_ENV=production`` forced on."""

import os

os.environ["DJANGO_ENV"] = "production"

from config.settings import *  # noqa: F403
