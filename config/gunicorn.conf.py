"""gunicorn's configuration for the web process: ``gunicorn -c config/gunicorn.conf.py config.wsgi``.

The configuration the side-by-side benchmark measures (docs/performance.md, "Annotate beside doccano"; README.md
runs it). Threaded workers keep the client's connection between requests (no TCP connect and close per
annotation, on the server or the client), and a request waiting on PostgreSQL leaves the process to another
thread. The keep-alive outlasts a client's pause between two requests, so a client does not send on a
connection the server is closing at that moment; behind nginx, nginx holds the client connections anyway.
"""

import multiprocessing
import os

worker_class = "gthread"
workers = int(os.environ.get("WEB_WORKERS", max(2, multiprocessing.cpu_count() + 1)))
threads = int(os.environ.get("WEB_THREADS", 4))
keepalive = 75
# Each thread keeps its database connection for a minute instead of opening one per request (checked before
# reuse, so a database restart costs no failed request), and the settings' DEBUG is off whether or not
# DJANGO_ENV=production is set (DEBUG formats and keeps the text of every query).
raw_env = [f"DB_CONN_MAX_AGE={os.environ.get('DB_CONN_MAX_AGE', '60')}", "DEBUG=off"]


def post_worker_init(worker: object) -> None:
    """Once a worker has loaded the application (the URLconf and every view, ``config.wsgi``), move what it
    loaded out of the cycle collector's reach: it lives as long as the worker. A full collection otherwise walks
    all of it (~130,000 objects; 63–114 ms of CPU each during the harness's import and annotate) holding the
    interpreter's lock, and the requests on the worker's other threads wait: the annotate benchmark's p99."""
    import gc

    gc.freeze()
