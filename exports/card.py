"""The dataset card (``README.md``), generated from the release record — never hand-written.

Layout: a Hugging Face card (YAML header with licence, language, task categories, sizes and a ``configs``
entry per layout ``datasets`` reads), then the sections of *Datasheets for Datasets* (Gebru et al.): motivation,
composition, collection and annotation, agreement, PII and screening, splits, baseline results,
known limitations. Everything comes from the manifest dict the release service writes (plus the
guideline sections in force), so a card says exactly what the release holds. No timestamps: the same
release state gives the same bytes.

The card is named ``README.md`` because that is the file ``datasets.load_dataset(<folder>)`` (and the Hugging
Face Hub) reads its ``configs`` from. What people typed (the project's name and description, sources, label
names) is written so that no Markdown renderer turns it into HTML: plain text is escaped (:func:`plain`), the
guidelines' Markdown keeps its formatting but not its raw HTML (:func:`no_html`).
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath
from typing import Any

from annotation.agreement.reliability import reliability
from annotation.task_types import CHAR_TSV, EOJEOL_TSV, JSON_ARRAY, SQUAD
from datasets_build.klue_formats import klue_spec

from .writers import FORMATS, file_format
from .writers.flat import FlatSchema

CARD_NAME = "README.md"

#: SPDX identifiers whose Hugging Face licence id is not simply the lower-cased SPDX id.
_HF_LICENSE = {"CC-BY-SA-4.0": "cc-by-sa-4.0", "CC-BY-4.0": "cc-by-4.0", "CC-BY-NC-SA-4.0": "cc-by-nc-sa-4.0",
               "CC-BY-ND-4.0": "cc-by-nd-4.0", "CC0-1.0": "cc0-1.0", "Apache-2.0": "apache-2.0", "MIT": "mit"}


def hf_license(sources: list[dict[str, Any]]) -> str:
    licenses = sorted({s["license"] for s in sources if s.get("license")})
    if not licenses:
        return "unknown"
    if len(licenses) > 1:
        return "other"
    return _HF_LICENSE.get(licenses[0], licenses[0].lower())


def size_category(n: int) -> str:
    for bound, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                        (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")):
        if n < bound:
            return name
    return "10M<n<100M"


# -- what people typed, as text ------------------------------------------------------------------------

#: The characters with which Markdown makes HTML inline: raw HTML and autolinks (``<``), entities (``&``), links
#: and images (``[``, ``]``, ``!``), emphasis and strike-through (``*``, ``_``, ``~``), code (`` ` ``), and the
#: backslash that escapes them. CommonMark shows a backslash-escaped ASCII punctuation character as itself.
_INLINE = re.compile(r"([\\`*_\[\]<>!&~#])")
#: What makes a line a block of its own (heading, quote, list item, rule, fence, table, setext underline).
_BLOCK_START = re.compile(r"^(\d+)([.)])|^([-+=|:])")


def plain(value: Any) -> str:
    """``value`` as Markdown text that renders as itself on one line: nothing in it becomes a tag."""
    return _INLINE.sub(r"\\\1", " ".join(str(value).split()))


def _plain_block(text: str) -> list[str]:
    """A text of several lines (the project's description) as Markdown paragraphs of plain text."""
    lines = []
    for line in text.strip().splitlines():
        line = plain(line)
        lines.append(_BLOCK_START.sub(lambda hit: f"{hit[1]}\\{hit[2]}" if hit[1] else f"\\{hit[3]}", line))
    return lines


def no_html(markdown: str) -> str:
    """Markdown (a guideline) without raw HTML: every ``<`` is written as an entity, so no tag, comment or
    autolink survives, while lists, emphasis and links stay Markdown."""
    return markdown.replace("<", "&lt;")


# -- the YAML header ------------------------------------------------------------------------------------

#: The ``datasets`` builder that reads each layout's split files, and its options.
_CONLL_2003 = ("conll", {"column_names": ["tokens", "pos_tags", "chunk_tags", "ner_tags"]})
_CONLLU = ("conll", {"column_names": ["id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps",
                                      "misc"], "delimiter": "\t", "comment_prefix": "#"})
_KLUE = {JSON_ARRAY: ("json", {}), SQUAD: ("json", {"field": "data"}),
         # KLUE's TSVs: ``##`` lines (header, one per sentence) are comments, a blank line ends a sentence.
         CHAR_TSV: ("conll", {"column_names": ["chars", "tags"], "delimiter": "\t", "comment_prefix": "##"}),
         EOJEOL_TSV: ("conll", {"column_names": ["index", "word_form", "lemma", "pos", "head", "deprel"],
                                "delimiter": "\t", "comment_prefix": "##"})}
_LOADERS: dict[str, tuple[str, dict[str, Any]]] = {
    "jsonl": ("json", {}), "csv": ("csv", {}), "parquet": ("parquet", {}), "doccano": ("json", {}),
    "labelstudio": ("json", {}), "squad": ("json", {"field": "data"}), "conll": _CONLL_2003, "conllu": _CONLLU}
#: Which layout ``load_dataset(<folder>)`` gives without a config name, first of those the release has.
_DEFAULT_ORDER = ("jsonl", "parquet", "csv", "klue")
#: ``datasets`` reads a whole folder with one builder, which it infers from the first config's file names
#: (``datasets.packaged_modules._EXTENSION_TO_MODULE``). A layout can be a config when that builder is the one that
#: reads it: not KLUE's TSVs (``.tsv``: the CSV builder) nor CoNLL-2003's ``.txt`` (the text builder). Nor CoNLL-U:
#: a card's config cannot give the CoNLL builder its columns (``datasets`` keeps a config's option only when the
#: builder's config class has it as a class attribute, and ``ConllConfig.column_names`` is a default-factory field),
#: so it would read the token column alone.
_INFERRED = {".json": "json", ".jsonl": "json", ".parquet": "parquet", ".csv": "csv"}
#: When the layouts need several builders, the folder's configs are those of the builder that reads the most
#: layouts, first of these on a tie.
_BUILDER_ORDER = ("json", "parquet", "csv")


def loader(kind: str, task_slug: str) -> tuple[str, dict[str, Any]]:
    """The ``datasets`` builder that reads a layout's split files and its options."""
    return _KLUE[klue_spec(task_slug).layout] if kind == "klue" else _LOADERS[kind]


def folder_loadable(kind: str, task_slug: str) -> bool:
    """Whether ``datasets.load_dataset(<folder>)`` can read a layout through the card's configs: its files'
    names name the builder that reads them (not so for KLUE's TSVs and CoNLL, read by the CoNLL builder)."""
    return loader(kind, task_slug)[0] in _BUILDER_ORDER


def split_files(m: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each layout's split files that hold records, in the order of :data:`FORMATS`. A split without records has
    no file (``datasets`` refuses a configured split whose files hold no data)."""
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for f in m["files"]:
        if f.get("split") and f.get("records") and f["kind"] in FORMATS:
            by_kind.setdefault(f["kind"], []).append(f)
    return {kind: by_kind[kind] for kind in FORMATS if kind in by_kind}


def folder_configs(m: dict[str, Any]) -> list[str]:
    """The layouts the card's ``configs`` name (the default first): those ``datasets`` reads with the folder's
    builder. The release's other layouts load with their own builder (:func:`load_call`); a release of only
    KLUE's TSVs and CoNLL files has no config."""
    by_builder: dict[str, list[str]] = {}
    for kind, files in split_files(m).items():
        builder = loader(kind, m["task_type"])[0]
        if all(_INFERRED.get(PurePosixPath(f["path"]).suffix) == builder for f in files):
            by_builder.setdefault(builder, []).append(kind)
    if not by_builder:
        return []
    builder = max(by_builder, key=lambda b: (len(by_builder[b]), -_BUILDER_ORDER.index(b)))
    chosen = by_builder[builder]
    default = next((kind for kind in _DEFAULT_ORDER if kind in chosen), chosen[0])
    return [default, *(kind for kind in chosen if kind != default)]


def load_call(m: dict[str, Any], kind: str) -> str:
    """The Python that loads one layout's splits with ``datasets`` (paths relative to the release folder)."""
    builder, options = loader(kind, m["task_type"])
    files = ", ".join(f"{json.dumps(f['split'])}: {json.dumps(f['path'])}" for f in split_files(m)[kind])
    extra = "".join(f", {name}={json.dumps(value, ensure_ascii=False)}" for name, value in options.items())
    return f"load_dataset({json.dumps(builder)}, data_files={{{files}}}{extra})"


def _yaml_list(key: str, values: list[str], indent: str = "") -> list[str]:
    return [f"{indent}{key}:"] + [f"{indent}- {json.dumps(v, ensure_ascii=False)}" for v in values]


def _header(m: dict[str, Any], schema: FlatSchema) -> list[str]:
    total = sum(m["splits"].values())
    lines = ["---", f"license: {hf_license(m['sources'])}", *_yaml_list("language", ["ko"]),
             *_yaml_list("task_categories", list(schema.hf_categories)),
             *_yaml_list("task_ids", list(schema.hf_task_ids)),
             *_yaml_list("size_categories", [size_category(total)]),
             f"pretty_name: {json.dumps(m['project_name'] + ' ' + m['version'], ensure_ascii=False)}"]
    configs = folder_configs(m)
    if configs:
        lines.append("configs:")
    files = split_files(m)
    for n, kind in enumerate(configs):
        lines.append(f"- config_name: {kind}")
        if n == 0:
            lines.append("  default: true")
        # JSON is YAML: lists and strings (a tab as "\t") as JSON.
        lines += [f"  {name}: {json.dumps(value)}" for name, value in loader(kind, m["task_type"])[1].items()]
        lines.append("  data_files:")
        for f in files[kind]:
            lines += [f"  - split: {f['split']}", f"    path: {f['path']}"]
    return [*lines, "---", ""]


def _loading(m: dict[str, Any]) -> list[str]:
    """The card's section on loading the folder with ``datasets``."""
    if not split_files(m):
        return []
    configs = folder_configs(m)
    others = [kind for kind in split_files(m) if kind not in configs]
    out = ["### Loading with `datasets`", ""]
    if configs:
        out += [f"`datasets.load_dataset(\"<folder>\")` loads the `{configs[0]}` files"
                + ("; the other layouts it reads by name: "
                   + ", ".join(f'`load_dataset("<folder>", "{kind}")`' for kind in configs[1:])
                   if configs[1:] else "")
                + ". A split without records has no file in any layout.", ""]
    else:
        out += ["No file name here tells `datasets` the builder that reads it (it would take KLUE's `.tsv` for "
                "CSV, CoNLL-2003's `.txt` for plain text, and read CoNLL-U's token column alone), so the card "
                "names no config and `datasets.load_dataset(\"<folder>\")` does not read this folder correctly. "
                "A split without records has no file in any layout.", ""]
    if others:
        out += [("`datasets` reads a folder with one builder, so the other layouts load with their own"
                 if configs else "Each layout loads with its builder")
                + " (from the release folder, after `from datasets import load_dataset`):", ""]
        out += [f"- {kind}: `{load_call(m, kind)}`" for kind in others] + [""]
    return out


def _table(head: list[str], rows: list[list[Any]]) -> list[str]:
    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
            *("| " + " | ".join(cell(v) for v in row) + " |" for row in rows), ""]


def _number(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _quote(markdown: str) -> list[str]:
    return [("> " + line).rstrip() for line in markdown.strip().splitlines()] + [""]


def _soft_labels(m: dict[str, Any]) -> list[str]:
    """What the soft-label columns hold (only a release built with them has ``soft_labels``)."""
    soft = m.get("soft_labels")
    if not soft:
        return []
    return ["### Soft labels", "",
            f"`{soft['votes']}` gives, for every label of the schema, how many of the item's annotations chose it "
            "(zeros included): the votes the gold rule counted, so `count / sum` is the annotators' label "
            f"distribution. `{soft['posteriors']}` gives each label's posterior probability under the annotator "
            "model that decided the gold — Dawid–Skene (Dawid & Skene 1979) or MACE (Hovy et al. 2013) — summing "
            "to 1 (to six decimals); it is null where no model decided the item (majority vote, adjudication, a "
            f"known answer). The gold rule of this release: {plain(str(soft.get('rule') or '—'))}. Neither field is "
            "in the KLUE-native or standard-format files. Train on them for soft-label or calibration studies; "
            "evaluate on the gold label.", ""]


def render_card(m: dict[str, Any], schema: FlatSchema, guidelines: list[dict[str, Any]],
                description: str = "") -> str:
    """The card's Markdown for a manifest ``m`` (see ``services._manifest``)."""
    total = sum(m["splits"].values())
    out = _header(m, schema)
    out += [f"# {plain(m['project_name'])} — release {m['version']}", ""]
    if description.strip():
        out += [*_plain_block(description), ""]
    out += [f"A Korean {m['task_title'].lower()} dataset in the format of {m['klue_name']} (KLUE), built with "
            f"Goldset from the project `{m['project']}`. "
            f"{total} records in {sum(1 for n in m['splits'].values() if n)} split(s).", ""]

    out += ["## Motivation", "",
            f"This release was created to train and evaluate models on {m['task_title'].lower()} "
            f"({m['klue_name']}) in Korean, following the KLUE construction process: licensed sources, PII "
            "screened before annotation, several annotators per item, measured agreement, and leakage-free "
            "splits checked by a baseline model.", ""]

    out += ["## Dataset structure", "", "### Data files", ""]
    out += _table(["path", "format", "split", "records", "how to load"],
                  [[f"`{f['path']}`", file_format(f["kind"])[0], f.get("split") or "—", _number(f.get("records")),
                    file_format(f["kind"])[1]] for f in m["files"]])
    out += _loading(m)
    out += ["### Data fields (JSONL, CSV, Parquet)", ""]
    out += _table(["column", "type", "from the KLUE record"],
                  [[f"`{c.name}`", str(c.type), " or ".join(f"`{p}`" for p in c.paths)] for c in schema.columns]
                  + [["`split`", "string", "the release split"]])
    out += ["KLUE-native files keep KLUE v1.1's names, field order and layout exactly.", ""]
    out += _soft_labels(m)

    out += ["### Splits and label distribution", ""]
    labels = sorted({label for counts in m["label_counts"].values() for label in counts})
    out += _table(["split", "records", *map(plain, labels)],
                  [[split, n, *(m["label_counts"].get(split, {}).get(label, 0) for label in labels)]
                   for split, n in m["splits"].items()])
    spec = m["split_spec"]
    if spec.get("mode") == "keep":
        out += ["Splits: **kept** as each item already had them (e.g. the imported KLUE train/dev).", ""]
    else:
        ratios = ", ".join(f"{k} {v}" for k, v in spec.get("ratios", {}).items())
        out += [f"Splits: ratios {ratios}, seed **{m['seed']}**; stratified by "
                f"{'`' + schema.stratify + '`' if schema.stratify else 'nothing (the task has no item label)'}; "
                "grouped so that items sharing a group key (premise, passage, dialogue, source document), exact "
                "duplicates and near duplicates stay in one split.", ""]
    leak = m["leakage"]
    out += ["### Leakage check", "",
            f"**{'clean' if leak.get('clean') else 'LEAKS FOUND'}** — exact duplicates across splits: "
            f"{leak.get('exact_duplicates_across_splits', 0)}, groups across splits: "
            f"{leak.get('groups_across_splits', 0)}, near-duplicate pairs across splits: "
            f"{leak.get('near_duplicates_across_splits', 0)} (of {leak.get('near_duplicate_pairs_checked', 0)} "
            "near-duplicate pairs known from import).", ""]
    out += changes_and_contamination(m)

    out += ["## Sources and licences", ""]
    if m["sources"]:
        out += _table(["source", "licence", "URL", "provenance"],
                      [[plain(s["name"]), plain(s["license"]), plain(s.get("url") or "—"),
                        plain(s.get("provenance") or "—")] for s in m["sources"]])
    else:
        out += ["No source is recorded for these items; check the licence before redistributing.", ""]

    out += ["## Collection and annotation process", ""]
    ann = m["annotators"]
    out += [f"Annotators who contributed: {ann.get('total', 0)} ({ann.get('imported', 0)} came with the corpus).",
            "",
            "Raters appear in the files under opaque ids (`r01`, `r02`, …) that are stable across the project's "
            "releases: the same id is the same person in every release. They are not account names; the mapping "
            "to accounts stays in Goldset, visible only to the project's managers. Records whose label came with "
            "the corpus without a rater keep an empty rater id.", ""]
    per_item = ann.get("per_item", {})
    if per_item:
        complete = ann.get("complete", {})
        out += _table(["stage", "annotators per item: items", "complete items (k annotations, corpus labels included)"],
                      [[stage, ", ".join(f"{k}: {v}" for k, v in hist.items()),
                        (f"{complete[stage]['items']} (k = {complete[stage]['k']})" if complete[stage]["k"] != "budget"
                         else f"{complete[stage]['items']} (each with its own k)") if stage in complete else ""]
                       for stage, hist in per_item.items()])
    out += _budget(ann.get("budget") or {})
    out += _assistance(ann["assisted"])
    gold = m["gold"]
    out += [f"Gold labels: source **{gold.get('source')}** — {gold.get('rule')}.", ""]
    versions = m["guideline_versions"]
    out += [f"Guideline versions used by the annotations: {', '.join(map(str, versions)) or 'none recorded'}.", ""]
    for guideline in guidelines:
        out += [f"### Guideline v{guideline['version']}: ethics", "", *_quote(no_html(guideline["ethics"])),
                f"### Guideline v{guideline['version']}: personal information", "",
                *_quote(no_html(guideline["pii"]))]

    out += ["## Agreement", ""]
    agreement = m["agreement"]
    coefficients = agreement.get("coefficients") or []
    if coefficients:
        out += _table(["coefficient", "level", "value", "95% CI"],
                      [[c.get("name"), c.get("level") or "—", _number(c.get("value")),
                        "—" if not c.get("ci95") else f"[{_number(c['ci95'][0])}, {_number(c['ci95'][1])}]"]
                       for c in coefficients])
        out += [f"Items counted: {agreement.get('items_counted')}; excluded: "
                f"{json.dumps(agreement.get('items_excluded') or {}, ensure_ascii=False)}.", ""]
        out += _reliability(agreement)
    else:
        out += [f"Not computed ({plain(agreement.get('reason', 'no agreement report'))}).", ""]

    out += ["## Personal information and screening", ""]
    screening = m["screening"]
    pii = screening.get("pii_by_type", {})
    out += [f"PII findings in the released items by type (values were pseudonymised or only detected, as the "
            f"import policy said; raw values are never stored): "
            f"{', '.join(f'{k}: {v}' for k, v in pii.items()) or 'none'}; items with findings: "
            f"{screening.get('items_with_pii', 0)}.", ""]
    out += [f"Screening status of the released items: "
            f"{', '.join(f'{k}: {v}' for k, v in screening.get('included_by_status', {}).items()) or '—'}. "
            f"All items of the project: "
            f"{', '.join(f'{k}: {v}' for k, v in screening.get('items_by_status', {}).items()) or '—'}.", ""]
    flags = screening.get("flags", {})
    if flags:
        out += _table(["flag", "resolutions"], [[kind, ", ".join(f"{k}: {v}" for k, v in res.items())]
                                                 for kind, res in flags.items()])
    out += ["Only releasable items are released: screening cleared them or a person kept them after review, "
            "no flag of any kind is open on them, and their gold label is usable.", ""]
    if m["excluded"]:
        out += [f"Items left out of the release: "
                f"{', '.join(f'{k}: {v}' for k, v in m['excluded'].items())}.", ""]

    out += ["## Baseline check", ""]
    check = m["check"]
    if check.get("passed") is None:
        out += [f"**Unchecked** — not run: {plain(check.get('reason', 'pending'))}.", ""]
    else:
        verdict = str(check.get("verdict") or ("passed" if check["passed"] else "failed"))
        interval = check.get("interval") or {}
        out += [f"**{verdict.capitalize()}** (seed {check.get('seed')}): {check.get('n_dev')} dev records; "
                f"baseline − trivial baseline on `{check.get('primary')}`: {_number(check.get('improvement'))} "
                f"points, bootstrap 95 % interval [{_number(interval.get('low'))}, {_number(interval.get('high'))}] "
                f"({interval.get('resamples', '—')} resamples). A verdict needs at least {check.get('min_dev')} dev "
                "records and an interval above 0; see `docs/releases.md`.", ""]
        out += [f"- {plain(reason)}" for reason in check.get("reasons") or []] + (
            [""] if check.get("reasons") else [])
        metrics, trivial = check.get("metrics") or {}, check.get("trivial") or {}
        names = sorted(set(metrics) | set(trivial))
        out += _table(["metric", "baseline", "trivial"],
                      [[n, _number(metrics.get(n)), _number(trivial.get(n))] for n in names])
        if check.get("sampled_from"):
            out += [f"Trained and scored on a seeded sample of {check['n_train']:,} train and {check['n_dev']:,} dev "
                    f"records (of {', '.join(f'{k}: {v:,}' for k, v in check['sampled_from'].items())}).", ""]

    out += ["## Known limitations", ""]
    out += [f"- {line}" for line in limitations(m)] + [""]
    out += ["## Reproducing and verifying", "",
            "`SHA256SUMS` lists every file (`sha256sum -c SHA256SUMS`, or `python manage.py verify_release "
            "<folder>`). `manifest.json` holds this card's figures. Rebuilding from the same project state with "
            "the same split specification and seed gives byte-identical data files.", ""]
    return "\n".join(out)


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "—"


def _reliability(agreement: dict[str, Any]) -> list[str]:
    """The per-label reliability of the released data (:mod:`.reliability`), as the dashboard shows it."""
    found = reliability(agreement)
    if found is None:
        return []
    what = {"one_vs_rest_alpha": "one-vs-rest Krippendorff's alpha (this label against all others, nominal)",
            "krippendorff_alpha_unitizing": "Krippendorff's unitizing alpha (partial credit for span boundaries)",
            "krippendorff_alpha_slots": "Krippendorff's alpha over the slot's values",
            "krippendorff_alpha_deprels": "one-vs-rest Krippendorff's alpha of the relation over the eojeol "
                                          "(nominal)"}[found.measure]
    out = ["### Per-label reliability", "",
           f"Each {found.kind}'s reliability: {what}, with its bootstrap 95% interval over item resamples "
           "(docs/agreement.md gives the formulas). A low value or a wide interval marks a label whose gold is "
           "less certain.", ""]
    return out + _table([found.kind, "alpha", "95% CI", "items", "annotations"], [
        [row["label"], _number(row["value"]),
         "—" if row["ci95"][0] is None else f"[{_number(row['ci95'][0])}, {_number(row['ci95'][1])}]",
         "—" if row["items"] is None else str(row["items"]),
         "—" if row["annotations"] is None else str(row["annotations"])] for row in found.rows])


def _budget(budget: dict[str, Any]) -> list[str]:
    """How many annotators each item was given (the project's budget by split and subset), when not all alike."""
    by_split = budget.get("items_by_k") or {}
    if not budget.get("file"):
        return []
    out = ["Annotators per item differed by split and subset (the project's annotation budget): default k = "
           f"{budget.get('default')}"
           + "".join(f", {split} k = {k}" for split, k in sorted((budget.get("splits") or {}).items()))
           + (f", and {len(budget.get('rules') or [])} subset rule(s) (in the manifest)" if budget.get("rules")
              else "") + f". `{budget['file']}` gives each record's k.", ""]
    out += _table(["split", "items by k"], [[split, ", ".join(f"k = {k}: {n}" for k, n in counts.items())]
                                            for split, counts in by_split.items()])
    return out


def _assistance(a: dict[str, int]) -> list[str]:
    """How much of the gold was made with a model's suggestion shown (``services._annotators``)."""
    if not a["shown"]:
        return ["No suggestions were shown: every annotation of the released items was made without a model's "
                "suggestion.", ""]
    return ["Model-assisted annotation: some annotators were shown a model's suggestion (see the agreement "
            "report's `assist` section for α of assisted and unassisted annotations separately).", "",
            *_table(["", "count", "share"], [
                ["released items whose gold came from at least one assisted annotation", a["assisted_items"],
                 f"{_percent(a['assisted_items'], a['items'])} of {a['items']} released items"],
                ["annotations of the released items shown a suggestion", a["shown"],
                 f"{_percent(a['shown'], a['annotations'])} of {a['annotations']} annotations"],
                ["annotations that accepted the suggestion unchanged", a["accepted_unchanged"],
                 f"{_percent(a['accepted_unchanged'], a['annotations'])} of the annotations, "
                 f"{_percent(a['accepted_unchanged'], a['shown'])} of those shown one"],
            ])]


def limitations(m: dict[str, Any]) -> list[str]:
    """What a user of the release should know, derived from its record."""
    notes = []
    if m["gold"].get("source") == "fallback":
        notes.append("Gold labels were not computed by the agreement and adjudication workflow; each record keeps "
                     "the corpus's own label or its single annotation.")
    if not m["leakage"].get("clean"):
        notes.append("The leakage check found items that cross splits (see above).")
    if not m["splits"].get("test"):
        notes.append("There is no test split in this release.")
    if not m["agreement"].get("coefficients"):
        notes.append("Inter-annotator agreement was not computed for this release.")
    if m["check"].get("passed") is None:
        notes.append("The baseline check did not run.")
    elif m["check"].get("verdict") == "inconclusive":
        notes.append("The baseline check was inconclusive: its evidence allowed no verdict.")
    if m["annotators"]["assisted"]["assisted_items"]:
        notes.append("Annotators shown a model's suggestion tend to keep it, so the gold of assisted items leans "
                     "towards that model; a model like it may score higher on them than on unassisted items.")
    notes.append("Near duplicates are those the import's MinHash index found (character 5-gram Jaccard); "
                 "paraphrases below that threshold can still cross splits.")
    notes.append("Automatic PII and toxicity screening is rule-based; it misses what its patterns and lexicon do "
                 "not cover.")
    return notes


def changes_and_contamination(m: dict[str, Any]) -> list[str]:
    """What changed since the previous version (``CHANGES.md`` in full) and what the contamination check found."""
    out: list[str] = []
    changes = m.get("changes")
    if changes:
        counts = ", ".join(f"{kind.replace('_', ' ')} {n}" for kind, n in changes["counts"].items())
        out += [f"### Changes since {changes['previous']}", "",
                f"{counts}. `CHANGES.md` lists them and `changes.jsonl` names every changed item.", ""]
    c = m.get("contamination")
    if c and (c["against"] or c["references"]):
        against = [f"the train split of {', '.join(c['against'])}"] if c["against"] else []
        against += [f"{r['kind']} reference {r['name']}" + (" (training data)" if r["training"] else "")
                    for r in c["references"]]
        found = "; ".join(f"{split}: {c['exact'].get(split, 0)} exact, {c['near'].get(split, 0)} near"
                          for split in sorted({*c["exact"], *c["near"]}))
        verdict = "clean" if c["clean"] else ("FAILS the project's policy" if c["fails"] else "found, warned")
        out += ["### Contamination check", "",
                f"**{verdict}** — dev and test items checked against {', '.join(against)}"
                + (f": {found}." if found else "."), ""]
    return out

