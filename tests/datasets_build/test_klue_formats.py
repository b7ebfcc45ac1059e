"""The KLUE format layer: file readers and writers, and parse_record/build_record of every task type.

Round trips on the real dev files (skipped without KLUE_DATA_DIR) and on small hand-written samples in
tests/data/klue (YNAT, RE, MRC have no shared file): read -> parse -> validate -> build -> write gives
back the same records and the same bytes.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from annotation.task_types import ParsedRecord, PayloadError, RecordAnnotation, get_task_type
from annotation.task_types.dst import FREE_VALUE_SLOTS
from datasets_build import klue_formats
from datasets_build.klue_formats import FormatError, iter_klue_records, klue_file_name, write_klue_file

SAMPLES = Path(__file__).parents[1] / "data" / "klue"


def _dumps(record: dict[str, Any]) -> str:
    # JSON text keeps key order, so equal text means equal records *and* the same field order.
    return json.dumps(record, ensure_ascii=False)


def round_trip(path: Path, slug: str, schema: dict[str, Any] | None = None) -> tuple[list[ParsedRecord], str]:
    """Read, parse, validate every item and annotation, rebuild; return the parsed records and the file
    written from the rebuilt records. Asserts each rebuilt record equals the one read."""
    task_type = get_task_type(slug)
    schema = schema or task_type.default_schema()
    parsed = []
    rebuilt = []
    for line, record in iter_klue_records(path, slug):
        result = task_type.parse_record(record)
        item = task_type.validate_item(result.payload)
        for annotation in result.annotations:
            task_type.validate_annotation(annotation.payload, item=item, schema=schema, stage=annotation.stage)
        built = task_type.build_record(external_id=result.external_id, payload=result.payload, meta=result.meta,
                                       annotations=result.annotations, gold=None)
        assert _dumps(built) == _dumps(record), f"line {line}"
        parsed.append(result)
        rebuilt.append(built)
    out = io.StringIO()
    assert write_klue_file(out, slug, rebuilt) == len(rebuilt)
    return parsed, out.getvalue()


# -- the real KLUE dev files --------------------------------------------------------------------------

@pytest.mark.klue
def test_nli_dev_round_trip(klue_dir: Path) -> None:
    path = klue_dir / "klue-nli-v1.1_dev.json"
    parsed, written = round_trip(path, "nli")
    assert len(parsed) == 3000
    assert sum(len(p.annotations) for p in parsed) == 15000
    assert {p.split for p in parsed} == {"dev"}
    first = parsed[0]
    assert set(first.payload) == {"premise", "hypothesis"}
    assert [(a.annotator, a.stage) for a in first.annotations] == [
        ("author", "writing"), ("label2", "validation"), ("label3", "validation"), ("label4", "validation"),
        ("label5", "validation")]
    # Pairs written from one premise share a group key.
    assert parsed[1].group_key == parsed[2].group_key != parsed[0].group_key
    # The one byte KLUE's writer did not produce: trailing blanks after the '{' opening the second record.
    original = path.read_text(encoding="utf-8")
    assert original.count("    {    \n") == 1
    assert written == original.replace("    {    \n", "    {\n")


@pytest.mark.klue
def test_sts_dev_round_trip(klue_dir: Path, tmp_path: Path) -> None:
    path = klue_dir / "klue-sts-v1.1_dev.json"
    parsed, written = round_trip(path, "sts")
    scores = sum(len(r["annotations"]["annotations"]) for r in json.loads(path.read_text(encoding="utf-8")))
    assert len(parsed) == 519
    assert sum(len(p.annotations) for p in parsed) == scores
    # KLUE's STS file has CRLF line endings; the writer reproduces them.
    assert written.encode("utf-8") == path.read_bytes()
    target = tmp_path / klue_file_name("sts", "1.1", "dev")
    write_klue_file(target, "sts", (r for _, r in iter_klue_records(path, "sts")))
    assert target.read_bytes() == path.read_bytes()


@pytest.mark.klue
def test_ner_dev_round_trip(klue_dir: Path) -> None:
    path = klue_dir / "klue-ner-v1.1_dev.tsv"
    parsed, written = round_trip(path, "ner")
    assert len(parsed) == 5000
    assert all(len(p.annotations) == 1 for p in parsed)
    assert parsed[0].meta == {"source": "wikitree"}
    assert parsed[0].annotations[0].payload["entities"][0] == {"start": 0, "end": 2, "type": "OG"}
    assert written.encode("utf-8") == path.read_bytes()


@pytest.mark.klue
def test_dp_dev_round_trip(klue_dir: Path) -> None:
    path = klue_dir / "klue-dp-v1.1_dev.tsv"
    parsed, written = round_trip(path, "dp")
    assert len(parsed) == 2000
    assert sum(len(p.annotations) for p in parsed) == 2000
    assert parsed[0].external_id == "klue-dp-v1_dev_00000"
    assert parsed[0].meta == {"source": "wikitree"}
    assert written.encode("utf-8") == path.read_bytes()


@pytest.mark.klue
def test_wos_sample_round_trip(klue_dir: Path) -> None:
    path = klue_dir / "wos-v1.1_dev_sample_10.json"
    schema = {"ontology": json.loads((klue_dir / "wos-v1.1_ontology.json").read_text(encoding="utf-8")),
              "special_values": ["none", "dontcare"], "free_value_slots": list(FREE_VALUE_SLOTS)}
    parsed, written = round_trip(path, "dst", schema)
    assert len(parsed) == 10
    assert all(p.group_key == p.external_id for p in parsed)
    assert not any("state" in turn for p in parsed for turn in p.payload["dialogue"])
    assert written.encode("utf-8") == path.read_bytes()


# -- hand-written samples for the tasks without a shared file ------------------------------------------

def test_ynat_sample_round_trip() -> None:
    path = SAMPLES / "ynat-v1.1_dev.json"
    parsed, written = round_trip(path, "tc")
    assert written.encode("utf-8") == path.read_bytes()
    assert [len(p.annotations) for p in parsed] == [3, 3, 3, 1]
    first = parsed[0]
    assert first.payload == {"title": "새 학기 앞두고 초등학교 돌봄교실 신청 몰려"}  # blind: no category, no URL
    assert first.annotations[0] == RecordAnnotation("04", "label", {"label": "사회", "second": "생활문화",
                                                                     "third": None})
    # A record with only the corpus label brings it as one annotation by the corpus ("").
    assert parsed[3].annotations == [RecordAnnotation("", "label", {"label": "세계", "second": None, "third": None})]
    assert [p.split for p in parsed] == ["dev", "dev", "dev", "train"]


def test_re_sample_round_trip() -> None:
    path = SAMPLES / "klue-re-v1.1_dev.json"
    parsed, written = round_trip(path, "re")
    assert written.encode("utf-8") == path.read_bytes()
    assert [p.annotations[0].payload["label"] for p in parsed] == [
        "org:founded_by", "per:place_of_birth", "no_relation"]
    assert "label" not in parsed[0].payload and parsed[0].meta == {"source": "wikipedia"}


def test_mrc_sample_round_trip() -> None:
    path = SAMPLES / "klue-mrc-v1.1_dev.json"
    parsed, written = round_trip(path, "mrc")
    assert written.encode("utf-8") == path.read_bytes()
    assert len(parsed) == 4
    # Questions on one passage share a group key; the question is in the item, its answer is not.
    assert parsed[0].group_key == parsed[2].group_key != parsed[3].group_key
    assert set(parsed[0].payload) == {"title", "context", "question"}
    assert parsed[0].annotations[0].payload == {
        "question": "도서관이 주말에 문을 닫는 시각은?", "question_type": 1,
        "answer": {"text": "오후 6시", "start": 37}, "plausible": None}
    impossible = parsed[2].annotations[0].payload
    assert impossible["answer"] is None and impossible["plausible"] == {"text": "두 곳", "start": 84}


def test_json_reader_streams_across_chunk_boundaries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(klue_formats, "_CHUNK", 7)
    path = SAMPLES / "ynat-v1.1_dev.json"
    records = list(iter_klue_records(path, "tc"))
    assert [r for _, r in records] == json.loads(path.read_text(encoding="utf-8"))
    assert [line for line, _ in records] == [2, 34, 66, 98]
    mrc = list(iter_klue_records(SAMPLES / "klue-mrc-v1.1_dev.json", "mrc"))
    assert [r["guid"] for _, r in mrc] == [f"klue-mrc-v1_dev_9000{i}" for i in range(4)]


def test_reader_accepts_binary_files_with_bom() -> None:
    data = b"\xef\xbb\xbf" + (SAMPLES / "klue-re-v1.1_dev.json").read_bytes()
    records = [r for _, r in iter_klue_records(io.BytesIO(data), "re")]
    assert [r["guid"] for r in records] == ["klue-re-v1_dev_90000", "klue-re-v1_dev_90001", "klue-re-v1_dev_90002"]


def test_file_names() -> None:
    assert klue_file_name("nli", "1.1", "dev") == "klue-nli-v1.1_dev.json"
    assert klue_file_name("tc", "1.1", "dev") == "ynat-v1.1_dev.json"
    assert klue_file_name("dst", "1.1", "dev") == "wos-v1.1_dev.json"
    assert klue_file_name("ner", "1.1", "dev") == "klue-ner-v1.1_dev.tsv"
    assert klue_file_name("dp", "2.0", "test") == "klue-dp-v2.0_test.tsv"
    with pytest.raises(ValueError, match="unknown task type"):
        klue_file_name("pos", "1.1", "dev")


# -- malformed input --------------------------------------------------------------------------------------

def _read_text(tmp_path: Path, name: str, text: str, slug: str) -> list[tuple[int, dict[str, Any]]]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return list(iter_klue_records(path, slug))


def test_truncated_json_names_the_line(tmp_path: Path) -> None:
    text = (SAMPLES / "klue-re-v1.1_dev.json").read_text(encoding="utf-8")
    cut = text[:text.index('"label": "per:place_of_birth"')]
    with pytest.raises(FormatError, match="truncated JSON") as caught:
        _read_text(tmp_path, "cut.json", cut, "re")
    assert caught.value.record_no == cut.count("\n") + 1
    assert "starts on line 20" in caught.value.message


def test_invalid_json_inside_a_record(tmp_path: Path) -> None:
    text = (SAMPLES / "klue-re-v1.1_dev.json").read_text(encoding="utf-8").replace('"source": "wikitree"',
                                                                                  '"source" "wikitree"')
    with pytest.raises(FormatError, match="invalid JSON") as caught:
        _read_text(tmp_path, "bad.json", text, "re")
    assert caught.value.record_no == 54
    with pytest.raises(FormatError, match="truncated JSON"):
        _read_text(tmp_path, "open.json", "[\n    {\"guid\": \"x\"},\n", "re")
    with pytest.raises(FormatError, match="expected '\\['"):
        _read_text(tmp_path, "object.json", '{"guid": "x"}', "re")
    with pytest.raises(FormatError, match="JSON object"):
        _read_text(tmp_path, "list.json", "[[1, 2]]", "re")


NER_TEXT = "\n".join(klue_formats.NER_HEADER) + "\n" + (
    "## klue-ner-v1_dev_00000-wikitree\t<한강:LC>에 가다\n"
    "한\tB-LC\n강\tI-LC\n에\tO\n \tO\n가\tO\n다\tO\n\n"
)


def test_ner_reader_and_header(tmp_path: Path) -> None:
    [(line, record)] = _read_text(tmp_path, "ok.tsv", NER_TEXT, "ner")
    assert line == 6
    assert record == {"guid": "klue-ner-v1_dev_00000", "source": "wikitree", "sentence": "한강에 가다",
                      "markup": "<한강:LC>에 가다", "chars": list("한강에 가다"),
                      "tags": ["B-LC", "I-LC", "O", "O", "O", "O"]}
    out = io.StringIO()
    write_klue_file(out, "ner", [record])
    assert out.getvalue() == NER_TEXT


def test_ner_tags_that_do_not_match_the_sentence(tmp_path: Path) -> None:
    wrong_char = NER_TEXT.replace("가\tO", "나\tO")
    with pytest.raises(FormatError, match="does not match its sentence") as caught:
        _read_text(tmp_path, "char.tsv", wrong_char, "ner")
    assert caught.value.record_no == 11 and caught.value.field == "chars"
    missing_row = NER_TEXT.replace("다\tO\n", "")
    with pytest.raises(FormatError, match="sentence has 6 characters, the tag rows 5"):
        _read_text(tmp_path, "short.tsv", missing_row, "ner")
    broken_iob = NER_TEXT.replace("한\tB-LC", "한\tI-LC")
    with pytest.raises(FormatError, match="does not continue") as caught:
        _read_text(tmp_path, "iob.tsv", broken_iob, "ner")
    assert caught.value.record_no == 7
    other_span = NER_TEXT.replace("강\tI-LC", "강\tO")
    with pytest.raises(FormatError, match="the tags mark '한':LC but the sentence marks '한강':LC"):
        _read_text(tmp_path, "span.tsv", other_span, "ner")
    with pytest.raises(FormatError, match="expected one character") as caught:
        _read_text(tmp_path, "wide.tsv", NER_TEXT.replace("에\tO", "에서\tO"), "ner")
    assert caught.value.record_no == 9


DP_TEXT = "\n".join(klue_formats.DP_HEADER) + "\n" + (
    "## klue-dp-v1_dev_00000_airbnb\t방이 넓어요.\n"
    "1\t방이\t방 이\tNNG+JKS\t2\tNP_SBJ\n"
    "2\t넓어요.\t넓 어요 .\tVA+EF+SF\t0\tVP\n\n"
)


def test_dp_reader_writer(tmp_path: Path) -> None:
    [(line, record)] = _read_text(tmp_path, "ok.tsv", DP_TEXT, "dp")
    assert line == 6
    assert record == {"guid": "klue-dp-v1_dev_00000", "source": "airbnb", "sentence": "방이 넓어요.",
                      "index": [1, 2], "word_form": ["방이", "넓어요."], "lemma": ["방 이", "넓 어요 ."],
                      "pos": ["NNG+JKS", "VA+EF+SF"], "head": [2, 0], "deprel": ["NP_SBJ", "VP"]}
    out = io.StringIO()
    write_klue_file(out, "dp", [record])
    assert out.getvalue() == DP_TEXT


def test_dp_bad_rows_name_the_line(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="'two' is not an integer") as caught:
        _read_text(tmp_path, "head.tsv", DP_TEXT.replace("NNG+JKS\t2", "NNG+JKS\ttwo"), "dp")
    assert (caught.value.record_no, caught.value.field) == (7, "head")
    with pytest.raises(FormatError, match="points past the last eojeol") as caught:
        _read_text(tmp_path, "far.tsv", DP_TEXT.replace("NNG+JKS\t2", "NNG+JKS\t5"), "dp")
    assert caught.value.record_no == 7
    with pytest.raises(FormatError, match="expected 6 columns") as caught:
        _read_text(tmp_path, "cols.tsv", DP_TEXT.replace("\tVP\n", "\n"), "dp")
    assert caught.value.record_no == 8
    with pytest.raises(FormatError, match="numbered 1, 2") as caught:
        _read_text(tmp_path, "index.tsv", DP_TEXT.replace("2\t넓어요.", "3\t넓어요."), "dp")
    assert (caught.value.record_no, caught.value.field) == (8, "index")
    with pytest.raises(FormatError, match="outside a sentence") as caught:
        _read_text(tmp_path, "orphan.tsv", DP_TEXT + "1\t방\t방\tNNG\t0\tNP\n", "dp")
    assert caught.value.record_no == 10


def test_mrc_without_data(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="data"):
        _read_text(tmp_path, "mrc.json", '{"version": "klue-mrc-v1"}', "mrc")


# -- JSONL/CSV-shaped records and Goldset's own annotations ----------------------------------------------

def _build(slug: str, parsed: ParsedRecord, annotations: list[RecordAnnotation] | None = None,
           gold: dict[str, Any] | None = None) -> dict[str, Any]:
    return get_task_type(slug).build_record(
        external_id=parsed.external_id, payload=parsed.payload, meta=parsed.meta,
        annotations=parsed.annotations if annotations is None else annotations, gold=gold)


def test_nli_record_shapes() -> None:
    nli = get_task_type("nli")
    only_gold = nli.parse_record({"guid": "g1", "premise": "비가 왔다.", "hypothesis": "날씨가 맑았다.",
                                  "gold_label": "contradiction"})
    assert only_gold.annotations == [RecordAnnotation("", "validation", {"label": "contradiction"})]
    assert only_gold.split == ""
    assert _build("nli", only_gold) == {"guid": "g1", "premise": "비가 왔다.", "hypothesis": "날씨가 맑았다.",
                                        "gold_label": "contradiction"}
    premise_only = nli.parse_record({"guid": "g2", "premise": "비가 왔다.", "source": "policy"})
    assert premise_only.payload == {"premise": "비가 왔다."} and not premise_only.annotations
    # Goldset's own work: one writer, four validators (usernames); gold from the 3-of-5 rule.
    own = [RecordAnnotation("kim", "writing", {"hypothesis": "우산이 필요했다.", "label": "entailment"}),
           *(RecordAnnotation(name, "validation", {"label": label}) for name, label in
             [("lee", "entailment"), ("park", "neutral"), ("choi", "entailment"), ("jung", "neutral")])]
    built = _build("nli", premise_only, own)
    assert built == {"guid": "g2", "source": "policy", "premise": "비가 왔다.", "hypothesis": "우산이 필요했다.",
                     "gold_label": "entailment", "author": "entailment", "label2": "entailment",
                     "label3": "neutral", "label4": "entailment", "label5": "neutral"}
    assert _build("nli", premise_only, own, gold={"label": "neutral"})["gold_label"] == "neutral"


def test_ynat_with_goldset_annotators() -> None:
    tc = get_task_type("tc")
    parsed = tc.parse_record({"guid": "ynat-v1_train_00001", "title": "코스피 2,500선 회복",
                              "predefined_news_category": "경제", "url": "u", "date": "d"})
    assert parsed.split == "train" and not parsed.annotations
    own = [RecordAnnotation("ann1", "label", {"label": "경제", "second": "세계", "third": None}),
           RecordAnnotation("ann2", "label", {"label": "경제", "second": None, "third": None}),
           RecordAnnotation("ann3", "label", {"label": "세계", "second": "경제", "third": "정치"})]
    assert _build("tc", parsed, own) == {
        "guid": "ynat-v1_train_00001", "title": "코스피 2,500선 회복", "predefined_news_category": "경제",
        "label": "경제",
        "annotations": {"annotators": ["ann1", "ann2", "ann3"], "annotations": {
            "first-scope": ["경제", "경제", "세계"], "second-scope": ["세계", "해당없음", "경제"],
            "third-scope": ["해당없음", "해당없음", "정치"]}},
        "url": "u", "date": "d"}


def test_sts_labels_recomputed_for_goldset_annotators() -> None:
    sts = get_task_type("sts")
    parsed = sts.parse_record({"guid": "klue-sts-v1_dev_9", "source": "x", "sentence1": "가", "sentence2": "나",
                               "labels": {"label": 1.0, "real-label": 1.0, "binary-label": 0}})
    assert parsed.annotations == [RecordAnnotation("", "label", {"score": 1.0})]
    assert _build("sts", parsed) == {"guid": "klue-sts-v1_dev_9", "source": "x", "sentence1": "가",
                                     "sentence2": "나", "labels": {"label": 1.0, "real-label": 1.0,
                                                                  "binary-label": 0}}
    own = [RecordAnnotation(name, "label", {"score": score}) for name, score in [("a", 3), ("b", 4.0), ("c", 4)]]
    built = _build("sts", parsed, own)
    assert built["labels"] == {"label": 3.7, "real-label": 11 / 3, "binary-label": 1}
    assert built["annotations"] == {"agreement": "0:0:0:1:2:0", "annotators": ["a", "b", "c"],
                                    "annotations": [3, 4, 4]}
    assert list(built) == ["guid", "source", "sentence1", "sentence2", "labels", "annotations"]


def test_ner_record_shapes() -> None:
    ner = get_task_type("ner")
    marked = ner.parse_record({"guid": "n1", "sentence": "<김철수:PS>는 <서울:LC>에 산다."})
    assert marked.payload == {"sentence": "김철수는 서울에 산다."}
    assert marked.annotations[0].payload == {"entities": [{"start": 0, "end": 3, "type": "PS"},
                                                          {"start": 5, "end": 7, "type": "LC"}]}
    assert not ner.parse_record({"sentence": "개체가 없는 문장."}).annotations
    built = _build("ner", marked, gold={"entities": [{"start": 5, "end": 7, "type": "LC"}]})
    assert built["markup"] == "김철수는 <서울:LC>에 산다."
    assert built["tags"][:7] == ["O", "O", "O", "O", "O", "B-LC", "I-LC"]
    with pytest.raises(Exception, match="does not match the characters"):
        ner.parse_record({"sentence": "가나", "chars": ["가", "다"], "tags": ["O", "O"]})



def test_ner_entities_list_becomes_the_corpus_label() -> None:
    ner = get_task_type("ner")
    spans = [{"start": 0, "end": 3, "type": "PS"}]
    parsed = ner.parse_record({"guid": "n2", "sentence": "김철수는 서울에 산다.", "entities": spans})
    assert parsed.payload == {"sentence": "김철수는 서울에 산다."} and parsed.meta == {}
    assert parsed.annotations[0].payload == {"entities": spans}
    with pytest.raises(PayloadError, match="either as markup or as a list"):
        ner.parse_record({"sentence": "<김철수:PS>는 산다.", "entities": spans})


@pytest.mark.parametrize(("markup", "message"), [
    ("<김철수:PS는 서울에 갔다", "'<' at position 0 has no matching ':PS>'"),
    ("김철수:PS> 서울에 갔다", "':PS>' at position 3 has no matching '<'"),
    ("<가상전자:OG>는 <판교:LC에서", "'<' at position 11 has no matching ':LC>'"),
    ("<김<철수:PS>:PS>는 갔다", "':PS>' at position 9 has no matching '<'"),
    ("<:PS>는 갔다", "empty entity markup '<:PS>' at position 0"),
])
def test_ner_unbalanced_markup_is_refused(markup: str, message: str) -> None:
    with pytest.raises(PayloadError, match=r"unbalanced|empty") as info:
        get_task_type("ner").parse_record({"sentence": markup})
    assert info.value.field == "sentence" and message in info.value.message


@pytest.mark.parametrize("text", ["3<5이고 7>2이다.", "<주소:Seoul 참고", "<참고: KS 규격>", "비율은 1:2>1:3이다."])
def test_ner_angle_brackets_that_are_not_markup_are_text(text: str) -> None:
    parsed = get_task_type("ner").parse_record({"sentence": text})
    assert parsed.payload == {"sentence": text} and not parsed.annotations

def test_dp_raw_sentence_and_gold() -> None:
    dp = get_task_type("dp")
    raw = dp.parse_record({"guid": "d1", "sentence": "방이 넓어요."})
    assert raw.payload == {"sentence": "방이 넓어요."} and not raw.annotations
    record = {"guid": "d2", "sentence": "방이 넓어요.", "index": [1, 2], "word_form": ["방이", "넓어요."],
              "lemma": ["방 이", "넓 어요 ."], "pos": ["NNG+JKS", "VA+EF+SF"]}
    unlabelled = dp.parse_record(record)
    assert not unlabelled.annotations and len(unlabelled.payload["tokens"]) == 2
    built = _build("dp", unlabelled, gold={"heads": [2, 0], "deprels": ["NP_SBJ", "VP"]})
    assert built == {**record, "head": [2, 0], "deprel": ["NP_SBJ", "VP"]}


def test_mrc_gold_answer_replaces_kept_answers() -> None:
    mrc = get_task_type("mrc")
    records = [r for _, r in iter_klue_records(SAMPLES / "klue-mrc-v1.1_dev.json", "mrc")]
    parsed = mrc.parse_record(records[0])
    kept = _build("mrc", parsed, gold={"answer": {"text": "오후 6시", "start": 37}})
    assert kept["answers"] == records[0]["answers"]
    changed = _build("mrc", parsed, gold={"answer": {"text": "6시", "start": 40}})
    assert changed["answers"] == [{"text": "6시", "answer_start": 40}, {"text": "오후 6시", "answer_start": 37}]


def test_dst_gold_states_go_back_on_user_turns() -> None:
    dst = get_task_type("dst")
    record = {"guid": "wos-v1_dev_9", "domains": ["식당"], "dialogue": [
        {"role": "user", "text": "식당 찾아요", "state": ["식당-종류-한식당"]},
        {"role": "sys", "text": "네"},
        {"role": "user", "text": "싼 곳으로요", "state": ["식당-종류-한식당", "식당-가격대-저렴"]}]}
    parsed = dst.parse_record(record)
    assert parsed.annotations[0].payload == {"states": [["식당-종류-한식당"], ["식당-종류-한식당", "식당-가격대-저렴"]]}
    assert _build("dst", parsed) == record
    gold = {"states": [["식당-종류-한식당"], ["식당-종류-한식당", "식당-가격대-적당"]]}
    assert _build("dst", parsed, gold=gold)["dialogue"][2]["state"][1] == "식당-가격대-적당"


def test_writers_refuse_records_they_cannot_lay_out() -> None:
    with pytest.raises(FormatError, match="record 'n1' cannot be written") as caught:
        write_klue_file(io.StringIO(), "ner", [{"guid": "n1", "sentence": "가", "markup": "가", "chars": ["가"],
                                               "tags": ["O", "O"]}])
    assert caught.value.record_no == 1
    with pytest.raises(FormatError, match="cannot be written"):
        write_klue_file(io.StringIO(), "dp", [{"guid": "d1", "sentence": "방이 넓어요."}])


def test_mrc_writer_groups_consecutive_questions_by_passage() -> None:
    records = [r for _, r in iter_klue_records(SAMPLES / "klue-mrc-v1.1_dev.json", "mrc")]
    out = io.StringIO()
    assert write_klue_file(out, "mrc", [records[0], records[3], records[1]]) == 3
    data = json.loads(out.getvalue())
    assert data["version"] == "klue-mrc-v1"
    assert [len(d["paragraphs"][0]["qas"]) for d in data["data"]] == [1, 1, 1]
    out = io.StringIO()
    write_klue_file(out, "mrc", [])
    assert json.loads(out.getvalue()) == {"version": "klue-mrc-v1", "data": []}
    out = io.StringIO()
    assert write_klue_file(out, "nli", []) == 0
    assert out.getvalue() == "[]"


def test_sts_gold_payload_from_the_mean_rule() -> None:
    sts = get_task_type("sts")
    parsed = sts.parse_record({"guid": "g", "sentence1": "가", "sentence2": "나"})
    own = [RecordAnnotation(name, "label", {"score": score}) for name, score in [("a", 2), ("b", 3)]]
    gold = {"score": 2.5, "real_label": 2.5, "label": 2.5, "binary_label": 0}
    built = _build("sts", parsed, own, gold=gold)
    assert built["labels"] == {"label": 2.5, "real-label": 2.5, "binary-label": 0}
    assert built["annotations"]["agreement"] == "0:0:1:1:0:0"


def test_non_utf8_files_are_refused_with_a_line(tmp_path: Path) -> None:
    path = tmp_path / "cp949.json"
    path.write_bytes('[\n    {"guid": "x", "title": "한국어 제목"}\n]'.encode("cp949"))
    with pytest.raises(FormatError, match="not UTF-8"):
        list(iter_klue_records(path, "tc"))
    tsv = tmp_path / "cp949.tsv"
    tsv.write_bytes(NER_TEXT.encode("cp949"))
    with pytest.raises(FormatError, match="not UTF-8") as caught:
        list(iter_klue_records(tsv, "ner"))
    assert caught.value.record_no == 1


def test_ner_entity_types_beyond_klue_are_read_and_left_to_the_schema(tmp_path: Path) -> None:
    ner = get_task_type("ner")
    parsed = ner.parse_record({"sentence": "<월드컵:EV> 개막"})
    assert parsed.annotations[0].payload == {"entities": [{"start": 0, "end": 3, "type": "EV"}]}
    item = ner.validate_item(parsed.payload)
    with pytest.raises(Exception, match="unknown entity type 'EV'"):
        ner.validate_annotation(parsed.annotations[0].payload, item=item, schema=ner.default_schema(), stage="label")
    custom = NER_TEXT.replace("<한강:LC>", "<한강:RIVER>").replace("B-LC", "B-RIVER").replace("I-LC", "I-RIVER")
    [(_, record)] = _read_text(tmp_path, "custom.tsv", custom, "ner")
    assert record["tags"][:2] == ["B-RIVER", "I-RIVER"]
    with pytest.raises(FormatError, match="unknown tag 'B-lc'"):
        _read_text(tmp_path, "lower.tsv", NER_TEXT.replace("B-LC", "B-lc"), "ner")
