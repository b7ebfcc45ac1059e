"""The Celery application.

With no ``CELERY_BROKER_URL`` the settings turn on ``task_always_eager``, so a fresh checkout runs every
job in-process; with a broker, jobs go to real workers (``celery -A config worker``).
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("goldset")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
