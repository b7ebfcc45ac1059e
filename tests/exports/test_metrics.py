"""The KLUE metrics against hand-worked examples, the official quirks pinned, and ``klue_score`` end to end."""

from __future__ import annotations

import json
import math
import random
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotation.task_types.re import RELATIONS
from exports.metrics import ScoringError, score
from exports.metrics import dp as dp_metrics
from exports.metrics import dst as dst_metrics
from exports.metrics import mrc as mrc_metrics
from exports.metrics import ner as ner_metrics
from exports.metrics import re as re_metrics
from exports.metrics.classification import accuracy, macro_f1, pearson_r, sts_binary_f1


@pytest.fixture
def klue_io() -> Any:
    """The shared KLUE reader/writer (``iter_klue_records``, ``write_klue_file``)."""
    from datasets_build import klue_formats

    return klue_formats


def approx(value: float) -> Any:
    return pytest.approx(value, abs=1e-9)


# --- tc / nli / sts -------------------------------------------------------------------------------


def test_tc_macro_f1_hand_worked() -> None:
    # a: P 1, R 1/2 -> 2/3; b: P 1/2, R 1 -> 2/3; c: 1  => 7/9
    assert macro_f1(["a", "a", "b", "c"], ["a", "b", "b", "c"]) == approx(700 / 9)


def test_tc_macro_f1_counts_a_predicted_only_label_as_zero() -> None:
    assert macro_f1(["a", "a"], ["a", "z"]) == approx(100 * (2 / 3 + 0) / 2)


def test_nli_accuracy() -> None:
    assert accuracy(["entailment", "neutral", "contradiction", "neutral"],
                    ["entailment", "neutral", "contradiction", "entailment"]) == approx(75.0)


def test_sts_pearson_and_binary_f1() -> None:
    gold, pred = [1.0, 2.0, 4.0, 5.0], [2.0, 3.0, 4.0, 5.0]
    assert pearson_r(gold, pred) == approx(100 * 7 / math.sqrt(50))
    # gold >= 3: [0, 0, 1, 1]; pred: [0, 1, 1, 1] -> P 2/3, R 1 -> F1 0.8
    assert sts_binary_f1(gold, pred) == approx(80.0)


def test_sts_pearson_of_a_constant_prediction_is_nan_as_official() -> None:
    assert math.isnan(pearson_r([1.0, 2.0, 4.0], [2.5, 2.5, 2.5]))


def test_sts_score_reads_real_label() -> None:
    gold = [{"guid": str(i), "labels": {"label": round(v, 1), "real-label": v}} for i, v in enumerate([0.2, 3.0, 4.4])]
    pred = [{"guid": str(i), "labels": {"label": v}} for i, v in enumerate([0.0, 3.0, 5.0])]
    result = score("sts", gold, pred)
    assert result["f1"] == approx(100.0)
    assert result["pearsonr"] == approx(pearson_r([0.2, 3.0, 4.4], [0.0, 3.0, 5.0]))


def test_missing_prediction_is_an_error() -> None:
    with pytest.raises(ScoringError, match="no prediction"):
        score("tc", [{"guid": "a", "label": "x"}], [{"guid": "b", "label": "x"}])


# --- ner ------------------------------------------------------------------------------------------


def ner_record(guid: str, chars: str, tags: list[str]) -> dict[str, Any]:
    return {"guid": guid, "chars": list(chars), "tags": tags}


def test_ner_hand_worked_and_official_quirks() -> None:
    gold = [ner_record("1", "박 씨", ["B-PS", "O", "O"]), ner_record("2", "서울시", ["B-LC", "I-LC", "I-LC"])]
    pred = [ner_record("1", "박 씨", ["B-PS", "O", "O"]), ner_record("2", "서울시", ["B-OG", "I-OG", "I-OG"])]
    result = score("ner", gold, pred)
    # entities: PS right, LC missed, OG spurious -> (1 + 0 + 0) / 3
    assert result["entity_macro_f1"] == approx(100 / 3)
    # 13 tags, O included: B-PS 1, O 1, B-LC/I-LC/B-OG/I-OG 0, the 7 tags absent on both sides count as 1
    assert result["char_macro_f1"] == approx(100 * 9 / 13)
    # corrected: the 5 entity tags seen anywhere, O excluded, absent ones ignored
    assert result["char_macro_f1_without_o"] == approx(100 * 1 / 5)


def test_ner_sequence_drops_spaces_and_frames_sentences_with_o() -> None:
    sequence = ner_metrics.official_sequence(list("조지 해리슨"), ["B-PS"] + ["I-PS"] * 5)
    assert sequence == ["O", "B-PS"] + ["I-PS"] * 4 + ["O"]
    # a space tagged O inside the entity is invisible to the official scorer
    gold = [ner_record("1", "조지 해리슨", ["B-PS"] + ["I-PS"] * 5)]
    pred = [ner_record("1", "조지 해리슨", ["B-PS", "I-PS", "O", "I-PS", "I-PS", "I-PS"])]
    assert score("ner", gold, pred)["entity_macro_f1"] == approx(100.0)


def test_entity_macro_f1_equals_seqeval_strict_iob2() -> None:
    from seqeval.metrics import f1_score as seqeval_f1
    from seqeval.scheme import IOB2

    rng = random.Random(13)
    for _ in range(300):
        n = rng.randint(1, 14)
        gold = [rng.choice(["O", "B-PS", "I-PS", "B-LC", "I-LC"]) for _ in range(n)]
        pred = [rng.choice(["O", "B-PS", "I-PS", "B-LC", "I-LC"]) for _ in range(n)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = 100 * seqeval_f1([gold], [pred], average="macro", mode="strict", scheme=IOB2)
        got = ner_metrics.entity_macro_f1(gold, pred)
        assert (math.isnan(expected) and math.isnan(got)) or got == approx(expected), (gold, pred)


def test_ner_all_o_prediction() -> None:
    gold = [ner_record("1", "김 씨", ["B-PS", "O", "O"])]
    pred = [ner_record("1", "김 씨", ["O", "O", "O"])]
    result = score("ner", gold, pred)
    assert result["entity_macro_f1"] == approx(0.0)
    # B-PS 0, O: P 3/4 R 1 -> 6/7, eleven absent tags 1 each
    assert result["char_macro_f1"] == approx(100 * (6 / 7 + 11) / 13)
    assert result["char_macro_f1_without_o"] == approx(0.0)


def test_ner_rejects_unknown_tags_and_length_mismatch() -> None:
    gold = [ner_record("1", "김씨", ["B-PS", "O"])]
    with pytest.raises(ScoringError, match="unknown tag"):
        score("ner", gold, [ner_record("1", "김씨", ["B-XX", "O"])])
    with pytest.raises(ScoringError, match="predicted tags"):
        score("ner", gold, [{"guid": "1", "chars": ["김"], "tags": ["O"]}])


# --- re -------------------------------------------------------------------------------------------


def one_hot(labels: list[str]) -> np.ndarray:
    probs = np.zeros((len(labels), len(RELATIONS)))
    for i, label in enumerate(labels):
        probs[i, RELATIONS.index(label)] = 1.0
    return probs


def test_re_micro_f1_ignores_no_relation() -> None:
    gold = ["no_relation", "org:founded", "per:title"]
    pred = ["org:founded", "org:founded", "no_relation"]
    # tp 1 (org:founded), fp 1 (org:founded on a no_relation pair), fn 1 (per:title) -> 0.5
    assert re_metrics.micro_f1(gold, pred) == approx(50.0)
    assert re_metrics.micro_f1(["no_relation"], ["no_relation"]) == approx(0.0)


def test_re_auprc_averages_over_all_thirty_classes() -> None:
    gold = ["no_relation", "org:founded", "per:title"]
    assert re_metrics.auprc(gold, one_hot(gold)) == approx(100 * 3 / 30)
    assert re_metrics.auprc_present(gold, one_hot(gold)) == approx(100.0)
    # uniform scores: the trapezoid from (recall 1, precision 1/3) to (0, 1) gives 2/3 per present class,
    # where average precision gives the base rate 1/3
    uniform = np.full((3, len(RELATIONS)), 1 / len(RELATIONS))
    assert re_metrics.auprc(gold, uniform) == approx(100 * 3 * (2 / 3) / 30)
    assert re_metrics.auprc_present(gold, uniform) == approx(100 / 3)


def test_re_score_needs_probs_for_auprc() -> None:
    gold = [{"guid": str(i), "label": label} for i, label in enumerate(RELATIONS)]
    assert set(score("re", gold, gold)) == {"micro_f1"}
    pred = [{**g, "probs": p.tolist()} for g, p in zip(gold, one_hot(RELATIONS), strict=True)]
    assert score("re", gold, pred) == {name: approx(100.0) for name in ("micro_f1", "auprc", "auprc_present")}
    with pytest.raises(ScoringError, match="30 floats"):
        score("re", gold, [{**g, "probs": [1.0]} for g in gold])


# --- dp -------------------------------------------------------------------------------------------


def dp_record(guid: str, heads: list[int], deprels: list[str]) -> dict[str, Any]:
    return {"guid": guid, "head": heads, "deprel": deprels}


def test_dp_one_wrong_head_adds_the_padding_class() -> None:
    labels = ["NP_SBJ", "NP_OBJ", "NP_AJT", "VP_MOD", "VP"]
    gold = [dp_record("1", [5, 5, 5, 5, 0], labels)]
    pred = [dp_record("1", [2, 5, 5, 5, 0], labels)]
    result = score("dp", gold, pred)
    assert result["uas"] == approx(80.0)
    assert result["las"] == approx(80.0)
    # LAS classes: NP_SBJ 0 (its only word got PAD), four others 1, PAD 0 (never gold) -> 4/6
    assert result["las_macro_f1"] == approx(100 * 4 / 6)
    assert result["las_macro_f1"] < result["las"] - 10
    # head classes: 5 (P 1, R 3/4 -> 6/7), 0 (1), 2 (predicted only, 0)
    assert result["uas_macro_f1"] == approx(100 * (6 / 7 + 1) / 3)


def test_dp_labels_from_index_15_are_pooled_as_others() -> None:
    assert dp_metrics.label_class("VP_SBJ") == 14
    assert dp_metrics.label_class("VP_CMP") == dp_metrics.label_class("X_SBJ") == dp_metrics.OTHERS
    gold = [dp_record("1", [2, 0], ["VP_CMP", "VP"])]
    pred = [dp_record("1", [2, 0], ["X_SBJ", "VP"])]
    result = score("dp", gold, pred)
    assert result["las_macro_f1"] == approx(100.0)
    assert result["las"] == approx(50.0)


def test_dp_gold_against_itself_and_attach_to_next() -> None:
    gold = [dp_record("1", [2, 3, 0], ["NP_SBJ", "NP_OBJ", "VP"]), dp_record("2", [3, 3, 0], ["NP", "NP_SBJ", "VP"])]
    assert score("dp", gold, gold) == {k: approx(100.0) for k in ("uas_macro_f1", "las_macro_f1", "uas", "las")}
    nxt = [dp_record(r["guid"], [i + 2 if i + 1 < len(r["head"]) else 0 for i in range(len(r["head"]))], r["deprel"])
           for r in gold]
    assert score("dp", gold, nxt)["uas"] == approx(100 * 5 / 6)


# --- mrc ------------------------------------------------------------------------------------------


def test_mrc_normalisation_keeps_korean_brackets() -> None:
    assert mrc_metrics.normalize_answer("《Abbey  Road》.") == "《abbey road》"
    # the official pattern only fires on its literal tail "()‘’"
    assert mrc_metrics.normalize_answer("〈()‘’") == ""


def test_mrc_rouge_w_is_a_longest_common_substring_f1() -> None:
    assert mrc_metrics.rouge_w_single("한 달가량", "한 달") == approx(0.75)
    # substring "서울"/"시청" (2): P 2/6, R 2/4 -> 0.4; subsequence "서울시청" (4): P 4/6, R 1 -> 0.8
    assert mrc_metrics.rouge_w_single("서울특별시청", "서울시청") == approx(0.4)
    assert mrc_metrics.rouge_lcs_single("서울특별시청", "서울시청") == approx(0.8)


def test_mrc_score_max_over_answers_and_unanswerable() -> None:
    gold = [
        {"guid": "q1", "answers": [{"text": "한 달가량"}, {"text": "한 달"}], "is_impossible": False},
        {"guid": "q2", "answers": [], "plausible_answers": [{"text": "북한산"}], "is_impossible": True},
        {"guid": "q3", "answers": [], "is_impossible": True},
    ]
    result = score("mrc", gold, {"q1": "한 달.", "q2": "북한산", "q3": ""})
    assert result["exact_match"] == approx(200 / 3)
    assert result["rouge_w"] == approx(200 / 3)
    with pytest.raises(ScoringError, match="no predicted answer"):
        score("mrc", gold, {"q1": ""})


# --- dst ------------------------------------------------------------------------------------------


def dialogue(guid: str, states: list[list[str]]) -> dict[str, Any]:
    turns: list[dict[str, Any]] = []
    for state in states:
        turns += [{"role": "user", "text": "u", "state": state}, {"role": "sys", "text": "s"}]
    return {"guid": guid, "domains": ["숙소"], "dialogue": turns}


def test_dst_hand_worked() -> None:
    a, b, c = "숙소-가격대-저렴", "숙소-지역-서울 동쪽", "숙소-인터넷 가능-yes"
    gold = [dialogue("d", [[a, b], [a, b, c], []])]
    pred = [dialogue("d", [[a, b], [a], ["택시-도착지-서울역"]])]
    result = score("dst", gold, pred)
    assert result["joint_goal_accuracy"] == approx(100 / 3)
    # per turn: 1; P 1 R 1/3 -> 0.5; empty gold with a prediction -> 0  => mean 0.5
    assert result["slot_micro_f1"] == approx(50.0)
    # pooled: tp 3, fp 1, fn 2 -> 6 / 9
    assert result["slot_f1_pooled"] == approx(100 * 6 / 9)


def test_dst_empty_turns_count_as_perfect_in_the_official_average() -> None:
    gold, pred = [[], [], ["a-b-c"]], [[], [], []]
    assert dst_metrics.slot_micro_f1(gold, pred) == approx(200 / 3)
    assert dst_metrics.slot_f1_pooled(gold, pred) == approx(0.0)


def test_unknown_task() -> None:
    with pytest.raises(ScoringError, match="unknown task"):
        score("pos", [], [])


# --- klue_score -----------------------------------------------------------------------------------


def run_score(task: str, gold: Path, pred: Path) -> dict[str, Any]:
    from io import StringIO

    out = StringIO()
    call_command("klue_score", task, str(gold), str(pred), "--json", stdout=out)
    return json.loads(out.getvalue())


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_klue_score_hand_written_files(tmp_path: Path) -> None:
    labels = ["경제", "사회", "사회", "IT과학"]
    gold = [{"guid": f"ynat-{i}", "title": "t", "label": label} for i, label in enumerate(labels)]
    pred = [{**g, "label": "사회"} for g in gold]
    result = run_score("tc", write_json(tmp_path / "g.json", gold), write_json(tmp_path / "p.json", pred))
    assert result["task"] == "tc" and result["n"] == 4
    assert result["metrics"] == {"macro_f1": approx(score("tc", gold, pred)["macro_f1"])}

    relations = [{"guid": f"re-{i}", "sentence": "s", "label": label} for i, label in enumerate(RELATIONS)]
    probs = [{**r, "probs": p.tolist()} for r, p in zip(relations, one_hot(RELATIONS), strict=True)]
    result = run_score("re", write_json(tmp_path / "rg.json", relations), write_json(tmp_path / "rp.json", probs))
    assert result["metrics"]["micro_f1"] == approx(100.0) and result["metrics"]["auprc"] == approx(100.0)

    context = "올여름 장마는 한 달가량"
    mrc = {"version": "klue-mrc-v1", "data": [{"title": "t", "paragraphs": [{"context": context, "qas": [
        {"question": "q", "answers": [{"text": "한 달가량", "answer_start": 8}], "question_type": 1,
         "is_impossible": False, "guid": "m1"},
        {"question": "q", "answers": [], "plausible_answers": [{"text": "장마", "answer_start": 4}],
         "question_type": 3, "is_impossible": True, "guid": "m2"}]}]}]}
    gold_path = write_json(tmp_path / "mrc.json", mrc)
    result = run_score("mrc", gold_path, write_json(tmp_path / "mp.json", {"m1": "한 달가량", "m2": ""}))
    assert result["n"] == 2 and result["metrics"]["exact_match"] == approx(100.0)
    result = run_score("mrc", gold_path, write_json(tmp_path / "mp2.json", {"m1": "한 달", "m2": "장마"}))
    assert result["metrics"] == {"exact_match": approx(0.0), "rouge_w": approx(100 * 0.75 / 2),
                                 "rouge_w_lcs": approx(100 * 0.75 / 2)}


def test_klue_score_bad_input(tmp_path: Path) -> None:
    gold = write_json(tmp_path / "g.json", [{"guid": "a", "label": "경제"}])
    with pytest.raises(CommandError, match="no such file"):
        call_command("klue_score", "tc", str(gold), str(tmp_path / "missing.json"))
    with pytest.raises(CommandError, match="no prediction"):
        pred = write_json(tmp_path / "p.json", [{"guid": "b", "label": "경제"}])
        call_command("klue_score", "tc", str(gold), str(pred))
    with pytest.raises(CommandError, match="MRC predictions"):
        mrc_gold = write_json(tmp_path / "m.json", {"data": [{"paragraphs": [{"context": "c", "qas": []}]}]})
        call_command("klue_score", "mrc", str(mrc_gold), str(write_json(tmp_path / "p2.json", ["x"])))
    with pytest.raises(CommandError):
        call_command("klue_score", "pos", str(gold), str(gold))


def test_klue_score_text_output(tmp_path: Path) -> None:
    from io import StringIO

    gold = write_json(tmp_path / "g.json", [{"guid": "a", "gold_label": "neutral"}])
    out = StringIO()
    call_command("klue_score", "nli", str(gold), str(gold), stdout=out)
    assert "accuracy" in out.getvalue() and "100.00" in out.getvalue()


# --- real KLUE dev files --------------------------------------------------------------------------

REAL_FILES = {
    "nli": "klue-nli-v1.1_dev.json",
    "sts": "klue-sts-v1.1_dev.json",
    "ner": "klue-ner-v1.1_dev.tsv",
    "dp": "klue-dp-v1.1_dev.tsv",
    "dst": "wos-v1.1_dev_sample_10.json",
}


def perturb(task: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Deterministic damage to every third record: wrong labels, all-O, shifted heads, dropped slots."""
    out = json.loads(json.dumps(records, ensure_ascii=False))
    for n, r in enumerate(out):
        if n % 3:
            continue
        if task == "nli":
            r["gold_label"] = {"entailment": "neutral", "neutral": "contradiction"}.get(r["gold_label"], "entailment")
        elif task == "sts":
            r["labels"] = {"label": 5.0 - r["labels"]["label"], "real-label": 5.0 - r["labels"]["real-label"]}
        elif task == "ner":
            r["tags"] = ["O"] * len(r["tags"])
            r["markup"] = r["sentence"]
        elif task == "dp":
            r["head"] = [0 if h == 0 else min(h + 1, len(r["head"])) for h in r["head"]]
            r["deprel"] = ["NP" for _ in r["deprel"]]
        elif task == "dst":
            for turn in r["dialogue"]:
                if turn["role"] == "user":
                    turn["state"] = turn["state"][:-1]
    return out


@pytest.mark.klue
@pytest.mark.parametrize("task", sorted(REAL_FILES))
def test_klue_score_real_dev_files(task: str, klue_dir: Path, tmp_path: Path, klue_io: Any) -> None:
    gold_path = klue_dir / REAL_FILES[task]
    gold = [record for _, record in klue_io.iter_klue_records(gold_path, task)]
    result = run_score(task, gold_path, gold_path)
    assert result["n"] == len(gold) and result["task"] == task
    assert all(value == approx(100.0) for value in result["metrics"].values()), result

    pred = perturb(task, gold)
    pred_path = tmp_path / gold_path.name
    klue_io.write_klue_file(pred_path, task, pred)
    result = run_score(task, gold_path, pred_path)
    expected = score(task, gold, pred)
    assert result["metrics"] == {k: approx(v) for k, v in expected.items()}
    assert all(value < 100.0 for value in result["metrics"].values()), result


def _prediction_copy(gold_path: Path, pred_path: Path, sentences: int, predict: Any) -> None:
    """A prediction file written the way people write one: the gold file's ``##`` lines copied verbatim,
    the first ``sentences`` sentences kept, and each sentence's rows passed through ``predict(n, rows)``."""
    blocks = gold_path.read_text(encoding="utf-8").split("\n\n")
    lines = blocks[0].split("\n")
    blocks = ["\n".join(lines[5:]), *blocks[1:sentences]]  # the five ## lines open the file
    out = ["\n".join(lines[:5])]
    for n, block in enumerate(blocks):
        title, *rows = block.split("\n")
        out.append("\n".join([title, *predict(n, [row.split("\t") for row in rows])]))
    pred_path.write_text("\n\n".join(out) + "\n\n", encoding="utf-8")


def _ner_model_errors(n: int, rows: list[list[str]]) -> list[str]:
    """What a tagger gets wrong: every third sentence loses its last entity, every fifth retypes its first
    one, every seventh starts an entity with I- (invalid BIO, which seqeval's strict mode ignores)."""
    tags = [tag for _, tag in rows]
    starts = [i for i, tag in enumerate(tags) if tag.startswith("B-")]
    if n % 3 == 0 and starts:
        for i in range(starts[-1], len(tags)):
            if i > starts[-1] and not tags[i].startswith("I-"):
                break
            tags[i] = "O"
    if n % 5 == 0 and starts and tags[starts[0]] != "O":
        retype = "LC" if tags[starts[0]] != "B-LC" else "OG"
        i = starts[0]
        tags[i] = f"B-{retype}"
        while i + 1 < len(tags) and tags[i + 1].startswith("I-"):
            i += 1
            tags[i] = f"I-{retype}"
    if n % 7 == 0 and starts and tags[starts[0]].startswith("B-"):
        tags[starts[0]] = "I-" + tags[starts[0]][2:]
    return [f"{char}\t{tag}" for (char, _), tag in zip(rows, tags, strict=True)]


@pytest.mark.klue
def test_klue_score_ner_prediction_with_headers_copied_from_gold(klue_dir: Path, tmp_path: Path,
                                                                 klue_io: Any) -> None:
    from io import StringIO

    from seqeval.metrics import f1_score as seqeval_f1
    from seqeval.scheme import IOB2

    gold_path, pred_path = tmp_path / "gold.tsv", tmp_path / "pred.tsv"
    _prediction_copy(klue_dir / REAL_FILES["ner"], gold_path, 200, lambda n, rows: ["\t".join(r) for r in rows])
    _prediction_copy(klue_dir / REAL_FILES["ner"], pred_path, 200, _ner_model_errors)
    with pytest.raises(klue_io.FormatError, match="line 8, tags: I-LC"):
        list(klue_io.iter_klue_records(pred_path, "ner"))  # as a corpus to import, the file is inconsistent

    out, err = StringIO(), StringIO()
    call_command("klue_score", "ner", str(gold_path), str(pred_path), "--json", stdout=out, stderr=err)
    result = json.loads(out.getvalue())
    assert result["n"] == 200
    assert result["warnings"] and all("pred.tsv: line " in w for w in result["warnings"])
    assert err.getvalue().count("warning: ") == 6 and "more sentence header(s)" in err.getvalue()

    gold = [r for _, r in klue_io.iter_klue_records(gold_path, "ner")]
    blocks = pred_path.read_text(encoding="utf-8").split("\n\n")
    blocks[0] = "\n".join(blocks[0].split("\n")[5:])
    pred_tags = [[row.split("\t")[1] for row in block.split("\n")[1:]] for block in blocks if block]
    gold_seq: list[str] = []
    pred_seq: list[str] = []
    for record, tags in zip(gold, pred_tags, strict=True):
        gold_seq += ner_metrics.official_sequence(record["chars"], record["tags"])
        pred_seq += ner_metrics.official_sequence(record["chars"], tags)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        official = 100 * seqeval_f1([gold_seq], [pred_seq], average="macro", mode="strict", scheme=IOB2)
    assert result["metrics"]["entity_macro_f1"] == approx(official)
    assert 50 < result["metrics"]["entity_macro_f1"] < 100
    assert result["metrics"]["char_macro_f1"] == approx(ner_metrics.char_macro_f1(gold_seq, pred_seq))


@pytest.mark.klue
def test_klue_score_dp_prediction_with_headers_copied_from_gold(klue_dir: Path, tmp_path: Path) -> None:
    def attach_left(n: int, rows: list[list[str]]) -> list[str]:
        # Every other sentence: the parser attaches each non-final eojeol to the next one, labelled NP.
        if n % 2:
            rows = [[*r[:4], str(i + 2) if i + 1 < len(rows) else "0", "NP" if i + 1 < len(rows) else r[5]]
                    for i, r in enumerate(rows)]
        return ["\t".join(r) for r in rows]

    gold_path, pred_path = tmp_path / "gold.tsv", tmp_path / "pred.tsv"
    _prediction_copy(klue_dir / REAL_FILES["dp"], gold_path, 300, lambda n, rows: ["\t".join(r) for r in rows])
    _prediction_copy(klue_dir / REAL_FILES["dp"], pred_path, 300, attach_left)
    result = run_score("dp", gold_path, pred_path)
    gold_rows = [line.split("\t") for line in gold_path.read_text(encoding="utf-8").splitlines()
                 if line and not line.startswith("##")]
    pred_rows = [line.split("\t") for line in pred_path.read_text(encoding="utf-8").splitlines()
                 if line and not line.startswith("##")]
    heads = [(g[4], p[4]) for g, p in zip(gold_rows, pred_rows, strict=True)]
    both = [(g[4], g[5], p[4], p[5]) for g, p in zip(gold_rows, pred_rows, strict=True)]
    assert result["warnings"] == []
    assert result["metrics"]["uas"] == approx(100 * sum(g == p for g, p in heads) / len(heads))
    assert result["metrics"]["las"] == approx(100 * sum(gh == ph and gl == pl for gh, gl, ph, pl in both) / len(both))
    assert 50 < result["metrics"]["uas"] < 100
