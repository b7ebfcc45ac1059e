"""What the import and review pages say about stored identifiers and the English notes a job or the screening
stored: PII types, screening categories, actions, licence terms and job outcomes, in the reader's language.
The job, the flags and the API keep what was stored."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from annotation.models import Flag, FlagKind, Item

from .models import ImportJob, ImportStatus
from .screening.highlight import SPAN_NAMES, Span

#: What the import did with a PII finding (``pii_findings[].action``, the summary's PII counts).
ACTIONS = {"pseudonymized": gettext_lazy("pseudonymized"), "detected": gettext_lazy("detected and kept for review")}


def span_name(key: str) -> str:
    """A PII type or screening category by its name (the review page's names)."""
    return str(SPAN_NAMES[key]) if key in SPAN_NAMES else key


def counts_text(counts: dict[str, int]) -> str:
    """``{"person": 2}`` as "인명 ×2", in the order given."""
    return ", ".join(f"{span_name(key)} ×{n}" for key, n in counts.items())


def job_outcome(job: ImportJob) -> str:
    """One sentence on where the job stands (its stored message is English, for logs and the API)."""
    if job.status == ImportStatus.SUCCEEDED:
        items = ngettext("%(n)s item", "%(n)s items", job.items_written) % {"n": job.items_written}
        annotations = ngettext("%(n)s annotation", "%(n)s annotations",
                               job.annotations_written) % {"n": job.annotations_written}
        return _("Imported %(items)s and %(annotations)s.") % {"items": items, "annotations": annotations}
    if job.status == ImportStatus.FAILED:
        if job.errors:
            return ngettext("Nothing was imported: %(n)s problem, listed below.",
                            "Nothing was imported: %(n)s problems, listed below.", len(job.errors)) % {
                "n": len(job.errors)}
        return _("Nothing was imported: the import stopped.")
    if job.status == ImportStatus.RUNNING:
        return _("Importing… the figures above follow the import as it runs.")
    return _("Waiting for a worker to start the import.")


def summary_rows(summary: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """The screening summary's PII and toxicity/bias counts as (name, counts) rows."""
    pii = [(span_name(pii_type), ", ".join(f"{ACTIONS.get(action, action)} {n}" for action, n in by_action.items()))
           for pii_type, by_action in (summary.get("pii") or {}).items()]
    screening = [(str(FlagKind(kind).label) if kind in FlagKind.values else kind, counts_text(categories))
                 for kind, categories in (summary.get("screening") or {}).items()]
    return {"pii": pii, "screening": screening}


def screener_note(flag: Flag, item: Item, spans: list[Span]) -> str:
    """What a flag raised by the screening (no user) found, from the item's findings rather than the stored
    English note; a person's flag keeps the note they wrote."""
    if flag.user_id is not None:
        return flag.note
    if flag.kind == FlagKind.PII:
        detected: dict[str, int] = {}
        for finding in item.pii_findings or []:
            if finding.get("action") == "detected":
                detected[finding["type"]] = detected.get(finding["type"], 0) + 1
        return _("Personal information detected and kept for review: %(found)s") % {"found": counts_text(detected)}
    found: dict[str, int] = {}
    for span in spans:
        if span.kind == flag.kind:
            found[span.label] = found.get(span.label, 0) + 1
    if not found:
        return _("Found by the screening when the item was imported.")
    return _("Found by the screening: %(found)s") % {"found": counts_text(found)}

