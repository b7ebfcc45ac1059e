"""Human names, in the reader's language, for the identifiers a release stores: metrics, file kinds, build
phases, split names, why items were left out, where the gold came from. Files and the API keep the
identifiers; the release pages show these names."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotation.models import GoldStatus, ScreeningStatus, Split

from .selectors import GOLD_FALLBACK, GOLD_TABLE

#: The KLUE scorers' metrics (exports/metrics/) and the baseline check's.
METRICS = {
    "accuracy": _("accuracy"), "macro_f1": _("macro F1"), "micro_f1": _("micro F1"), "f1": "F1",
    "pearsonr": _("Pearson's r"), "auprc": _("area under the precision-recall curve (AUPRC)"),
    "auprc_present": _("AUPRC over the relations present in gold"),
    "entity_macro_f1": _("entity-level macro F1"), "char_macro_f1": _("character-level macro F1"),
    "char_macro_f1_without_o": _("character-level macro F1 without the O tag"),
    "uas": _("UAS (unlabelled attachment score)"), "las": _("LAS (labelled attachment score)"),
    "uas_macro_f1": _("UAS macro F1"), "las_macro_f1": _("LAS macro F1"),
    "exact_match": _("exact match (EM)"), "rouge_w": "ROUGE-W",
    "rouge_w_lcs": _("ROUGE-W (longest common subsequence)"),
    "joint_goal_accuracy": _("joint goal accuracy"), "slot_micro_f1": _("slot micro F1"),
    "slot_f1_pooled": _("slot F1 (pooled over turns)"),
}

#: ReleaseFile.kind: the format a file is written in, or the release's own files.
FILE_KINDS = {
    "klue": "KLUE", "jsonl": "JSON Lines", "csv": "CSV", "parquet": "Parquet",
    "card": _("dataset card"), "manifest": _("manifest"), "checksums": _("checksums"), "config": _("configuration"),
    "conllu": "CoNLL-U", "conll": "CoNLL-2003", "squad": "SQuAD v2.0", "doccano": "doccano",
    "labelstudio": "Label Studio", "budget": _("annotators per item"), "changes": _("changelog"),
}

#: Release.progress["phase"] while a release is built (exports/services.py reports them).
PHASES = {
    "queued": _("waiting for a worker"), "items": _("reading the items and their gold"),
    "splits": _("dividing the items into splits"), "files": _("writing the files"),
    "card": _("writing the dataset card"), "check": _("running the baseline check"),
    "contamination": _("checking the dev and test items for contamination"),
}

#: Why items were left out (``annotation.gold.selectors.release_exclusion``).
#: The screening and gold statuses (``screening_needs_review``, ``gold_discarded``) are named by their own names.
EXCLUSIONS = {"screening_unknown": _("not screened"), "open_flag": _("an open flag"),
              "unlabelled": _("no annotation")}

#: Release.gold["source"].
GOLD_SOURCES = {
    GOLD_TABLE: _("the project's gold labels (gold rule and adjudication)"),
    GOLD_FALLBACK: _("the task's rule over the annotations (no gold computed yet)"),
}


def _named(names: dict[str, Any], key: str) -> str:
    """The name of ``key``, or the key itself when it is not a stored identifier this module knows."""
    return str(names[key]) if key in names else key


def metric_name(key: str) -> str:
    return _named(METRICS, key)


def file_kind_name(key: str) -> str:
    return _named(FILE_KINDS, key)


def phase_name(key: str) -> str:
    return _named(PHASES, key)


def split_name(key: str) -> str:
    return str(Split(key).label) if key in Split.values and key else key


def gold_source_name(key: str) -> str:
    return _named(GOLD_SOURCES, key)


def exclusion_name(key: str) -> str:
    """Why items were left out: the screening or gold status by its own name."""
    if key.startswith("screening_") and key[len("screening_"):] in ScreeningStatus.values:
        return gettext("%(status)s (screening)") % {"status": ScreeningStatus(key[len("screening_"):]).label}
    if key.startswith("gold_") and key[len("gold_"):] in GoldStatus.values:
        return gettext("%(status)s (gold)") % {"status": GoldStatus(key[len("gold_"):]).label}
    return _named(EXCLUSIONS, key)
