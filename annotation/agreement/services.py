"""Writes of the agreement feature: computing, caching and queueing reports (their reads are in ``selectors.py``).

A report is cached with the fingerprint of the annotations it saw (count and latest change); asking
again while nothing changed returns the stored one, and asking while a computation for the same
fingerprint is queued or running returns that job instead of starting another.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.utils import timezone

from ..models import AgreementReport, JobStatus, Project, User, WebhookEvent
from ..webhooks import services as webhooks
from .selectors import annotation_fingerprint, report_cached, report_for_fingerprint

if TYPE_CHECKING:
    from .report import Progress

# numpy/pandas are imported only when a report is computed (``report_run``), so that loading the URL
# configuration — which reaches this module through the views — stays fast for every other page.


@transaction.atomic
def report_request(*, project: Project, by: User | None = None) -> tuple[AgreementReport, bool]:
    """A valid report, or the job computing one. Returns (report, queued_now).

    The project row is locked so two managers opening the dashboard at once queue one job, not two.
    """
    Project.objects.select_for_update().get(pk=project.pk)
    count, changed = annotation_fingerprint(project)
    existing = report_for_fingerprint(project, (count, changed))
    if existing is not None:
        return existing, False
    report = AgreementReport.objects.create(project=project, annotation_count=count, annotations_changed_at=changed,
                                            requested_by=by)
    from ..tasks import agreement_report_compute

    transaction.on_commit(lambda: agreement_report_compute.delay(report.pk))
    return report, True


def report_run(report_id: int, *, progress: Progress | None = None) -> AgreementReport:
    """Compute a queued report (called by the Celery task), recording progress on the row as it goes."""
    report = AgreementReport.objects.select_related("project").get(pk=report_id)
    if report.status == JobStatus.DONE:
        return report
    AgreementReport.objects.filter(pk=report_id).update(status=JobStatus.RUNNING, progress=1)

    def on_progress(percent: int, note: str) -> None:
        AgreementReport.objects.filter(pk=report_id).update(progress=percent, progress_note=note[:200])
        if progress is not None:
            progress(percent, note)

    from .report import agreement_report

    started = time.perf_counter()
    try:
        data = agreement_report(report.project, progress=on_progress)
    except Exception as error:
        AgreementReport.objects.filter(pk=report_id).update(status=JobStatus.FAILED, error=str(error)[:2000],
                                                            finished_at=timezone.now())
        raise
    AgreementReport.objects.filter(pk=report_id).update(
        status=JobStatus.DONE, progress=100, data=data, seconds=time.perf_counter() - started,
        finished_at=timezone.now())
    report.refresh_from_db()
    primary = data.get("primary") or {}
    webhooks.emit(report.project, WebhookEvent.AGREEMENT_READY, {
        "report": report.pk, "annotations_counted": data.get("annotations_counted"),
        "items_counted": data.get("items_counted"), "annotators": data.get("annotators"),
        "measure": primary.get("name"), "value": primary.get("value")})
    return report


def report_now(project: Project, *, by: User | None = None) -> dict[str, Any]:
    """The report, computed in this process when no valid one is cached (the CLI's path); stored for reuse."""
    count, changed = annotation_fingerprint(project)  # one scan of the annotations, for the check and the row
    cached = report_cached(project, (count, changed))
    if cached is not None:
        return cached.data
    report = AgreementReport.objects.create(project=project, annotation_count=count, annotations_changed_at=changed,
                                            requested_by=by)
    return report_run(report.pk).data
