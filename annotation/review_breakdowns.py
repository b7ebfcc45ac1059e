"""What the agreement dashboard shows of the report's breakdowns (per label, per annotator pair, per guideline
version): rows with human names (:mod:`.display`) and the SVG charts (:mod:`.agreement.plots`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.utils.translation import gettext as _

from . import display
from .agreement import plots
from .agreement.reliability import reliability


def _annotator(report: dict[str, Any], annotator: int) -> str:
    return display.annotator_name(report.get("annotator_names", {}).get(str(annotator), str(annotator)))


def _interval(ci: list[float | None]) -> str:
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci and ci[0] is not None else "—"


def _per_label(section: dict[str, Any]) -> dict[str, Any]:
    rows = [{**entry, "name": display.display_name("measure_label", entry["label"]), "interval": _interval(
        entry["ci95"])} for entry in section["labels"]]
    kind = display.display_name("category_kind", section["kind"])
    chart = plots.bar_chart(
        [row["name"] for row in rows], [row["value"] for row in rows],
        title=_("One-vs-rest Krippendorff's alpha of each %(kind)s") % {"kind": kind},
        value_label=_("alpha of this %(kind)s against all others (1 = perfect)") % {"kind": kind}, fmt=".3f",
        value_range=(min([0.0, *[r["value"] for r in rows if r["value"] is not None]]), 1.0))
    return {"kind": kind, "items": section["items"], "rows": rows, "chart": chart}


def _pairs(report: dict[str, Any], section: dict[str, Any]) -> dict[str, Any]:
    usernames = report.get("annotator_names", {})
    rows = [{**pair, "name_a": _annotator(report, pair["a"]), "name_b": _annotator(report, pair["b"]),
             "interval": _interval(pair["ci95"]),
             # the disagreement list's pair filter, as its choices spell a pair (usernames in order)
             "query": urlencode({"pair": ",".join(sorted(usernames.get(str(a), str(a))
                                                         for a in (pair["a"], pair["b"])))})}
            for pair in section["pairs"]]
    in_pairs = sorted({a for pair in section["pairs"] for a in (pair["a"], pair["b"])},
                      key=lambda a: section["annotators"].index(a))
    chart = None
    if in_pairs:
        position = {a: n for n, a in enumerate(in_pairs)}
        matrix: list[list[float | None]] = [[None] * len(in_pairs) for _a in in_pairs]
        for pair in section["pairs"]:
            i, j = position[pair["a"]], position[pair["b"]]
            matrix[i][j] = matrix[j][i] = pair["value"]
        names = [_annotator(report, a) for a in in_pairs]
        values = [p["value"] for p in section["pairs"] if p["value"] is not None]
        chart = plots.heatmap(names, names, matrix, title=_("Cohen's kappa of each pair of annotators"),
                              x_label=_("annotator"), y_label=_("annotator"),
                              value_range=(min([0.0, *values]), 1.0))
    rows.sort(key=lambda row: (row["value"] is None, row["value"] if row["value"] is not None else 0))
    return {"rows": rows, "chart": chart, "min_shared": section["min_shared_items"],
            "below": section["pairs_below_minimum"]}


def _versions(section: dict[str, Any]) -> dict[str, Any]:
    versions = [{**entry, "interval": _interval(entry["ci95"])} for entry in section["versions"]]
    changes = []
    for change in section["changes"]:
        words = {"from": change["from"], "to": change["to"], "n": section["min_items"]}
        sentence = {
            "improved": _("Agreement rose from v%(from)s to v%(to)s: the revision helped (the 95%% interval of the "
                          "change lies above 0)."),
            "worsened": _("Agreement fell from v%(from)s to v%(to)s: the revision made it worse (the 95%% interval "
                          "of the change lies below 0)."),
            "no_clear_difference": _("No clear difference between v%(from)s and v%(to)s: the 95%% interval of the "
                                     "change includes 0."),
            "too_few_items": _("Too few items to tell whether v%(to)s helped: each version needs at least %(n)s "
                               "items with two or more annotations made under it."),
        }[change["verdict"]] % words
        changes.append({**change, "verdict_name": display.display_name("agreement_change", change["verdict"]),
                        "sentence": sentence, "interval": _interval(change["ci95"])})
    chart = None
    if len(versions) > 1:
        name = display.display_name("coefficient", next((v["name"] for v in versions if v.get("name")), ""))
        chart = plots.line_chart(
            [f"v{v['version']}" for v in versions],
            [plots.Series(name, [v["value"] for v in versions], [v["ci95"][0] for v in versions],
                          [v["ci95"][1] for v in versions])],
            title=_("%(name)s under each guideline version, with its 95%% interval") % {"name": name},
            x_label=_("guideline version"), y_label=name)
    return {"versions": versions, "changes": changes, "chart": chart, "min_items": section["min_items"],
            "without_version": section["annotations_without_version"]}


def reliability_table(report: dict[str, Any]) -> dict[str, Any] | None:
    """The per-label reliability (:mod:`.agreement.reliability`) of a report — the live one on the dashboard or
    the one a release stored — with names in the reader's language: what the release page shows, and what the
    dashboard shows for span and slot tasks (categorical tasks have their per-label section)."""
    found = reliability(report)
    if found is None:
        return None
    measures = {
        "one_vs_rest_alpha": _("Krippendorff's alpha of each %(kind)s against all the others (nominal, one-vs-rest)."),
        "krippendorff_alpha_unitizing": _("Krippendorff's unitizing alpha of each %(kind)s: partial credit when two "
                                          "annotators' spans overlap without matching."),
        "krippendorff_alpha_slots": _("Krippendorff's alpha of each %(kind)s over its values."),
        "krippendorff_alpha_deprels": _("Krippendorff's alpha of each %(kind)s against all the others over the "
                                        "eojeol (nominal, one-vs-rest)."),
    }
    kind = display.display_name("category_kind", found.kind)
    rows = [{**row, "name": display.display_name("measure_label", row["label"]), "interval": _interval(row["ci95"])}
            for row in found.rows]
    return {"kind": kind, "about": measures[found.measure] % {"kind": kind}, "rows": rows,
            "counted": any(row["items"] is not None for row in rows)}


def breakdowns(report: dict[str, Any]) -> dict[str, Any]:
    """The dashboard's per-label, per-pair and per-version parts (each ``None`` when the report has none: an older
    report, or a task whose answers are structures)."""
    return {
        "per_label": _per_label(report["per_label"]) if report.get("per_label") else None,
        "per_subject": None if report.get("per_label") else reliability_table(report),
        "pairs": _pairs(report, report["pair_kappa"]) if report.get("pair_kappa") else None,
        "versions": _versions(report["guideline_versions"]) if report.get("guideline_versions") else None,
    }
