"""scrub_record's shortcuts for records without PII keep what the full path gives.

A record whose texts and meta strings hold nothing comes back as it went in (the same objects, no findings);
a meta string with PII is found under the same field path whether it is a plain value or nested.
"""

from __future__ import annotations

import copy

from datasets_build.pii.apply import scrub_record
from datasets_build.pii.pseudonymize import Scrubber, resolve_policy


def _scrub(payload, meta, annotations=()):
    scrubber = Scrubber(resolve_policy(None))
    return scrubber, scrub_record(scrubber=scrubber, task_slug="tc", text_fields=("title",), payload=payload,
                                  meta=meta, annotations=list(annotations))


def test_a_clean_record_stands_as_it_is():
    payload, meta = {"title": "정부, 내년 예산안 발표 3"}, {"guid": "bench-000123", "label": "사회"}
    annotations = [{"label": "사회"}]
    scrubber, result = _scrub(payload, meta, annotations)
    assert result.payload is payload and result.meta is meta and result.annotations == annotations
    assert result.findings == [] and result.leaks == [] and not scrubber.replaced
    assert Scrubber(resolve_policy(None)).scrub("bench-000123").regions == []


def test_meta_findings_keep_their_field_paths():
    meta = {
        "guid": "bench-000123", "label": "사회", "reporter": "김민수 기자", "url": "https://blog.naver.com/minsu",
        "extra": {"contacts": ["문의 010-2345-6789", 7, None], "note": "없음"},
    }
    original = copy.deepcopy(meta)
    _, result = _scrub({"title": "문의 010-2345-6789 로"}, meta)
    assert meta == original  # the inputs are not modified
    assert [(f["field"], f["type"], f["action"]) for f in result.findings] == [
        ("title", "phone", "pseudonymized"), ("meta.reporter", "person", "detected"),
        ("meta.url", "url", "pseudonymized"), ("meta.extra.contacts[0]", "phone", "pseudonymized"),
    ]
    assert result.meta["extra"]["contacts"][0] == "문의 [전화번호1]" and result.meta["url"] == "[URL1]"
    assert result.meta["guid"] == "bench-000123" and result.leaks == []
