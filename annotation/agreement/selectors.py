"""Reads of the agreement feature: the fingerprint a cached report is valid for, and the cached reports."""

from __future__ import annotations

from django.db.models import Count, Max

from ..models import AgreementReport, Annotation, JobStatus, Project


def annotation_fingerprint(project: Project) -> tuple[int, str]:
    """(count, latest change) of the project's annotations: a cached report is valid while both hold
    (the count alone would miss a resubmitted annotation)."""
    row = Annotation.objects.filter(item__project=project).aggregate(n=Count("id"), latest=Max("updated_at"))
    return int(row["n"]), row["latest"].isoformat() if row["latest"] else ""


def report_cached(project: Project, fingerprint: tuple[int, str] | None = None) -> AgreementReport | None:
    """The newest finished report that is still valid for the project's current annotations (``fingerprint``:
    their :func:`annotation_fingerprint`, when the caller has it already)."""
    count, changed = fingerprint or annotation_fingerprint(project)
    return (AgreementReport.objects.filter(project=project, status=JobStatus.DONE, annotation_count=count,
                                           annotations_changed_at=changed).order_by("-created_at").first())


def report_for_fingerprint(project: Project, fingerprint: tuple[int, str]) -> AgreementReport | None:
    """The newest report for these annotations that has not failed: finished, or queued or running (asking
    again while it computes returns that job rather than starting another)."""
    count, changed = fingerprint
    return (AgreementReport.objects.filter(project=project, annotation_count=count, annotations_changed_at=changed)
            .exclude(status=JobStatus.FAILED).order_by("-created_at").first())


def report_latest_done(project: Project) -> AgreementReport | None:
    """The newest finished report, even if annotations changed since (shown while a fresh one computes)."""
    return AgreementReport.objects.filter(project=project, status=JobStatus.DONE).order_by("-created_at").first()
