"""The releases page's table of rater ids names each account as the review pages do: the corpus's own labels and
an imported corpus annotator by what they are, not by their internal account names."""

from __future__ import annotations

import pytest

from exports.models import RaterId
from tests.builders import client_for

pytestmark = pytest.mark.django_db


def test_rater_ids_name_imported_corpus_accounts_as_the_review_pages_do(make_project, make_user):
    project = make_project("tc")
    for number, username in enumerate((f"{project.slug}:corpus", f"{project.slug}:8b10064405e4", "coder"), 1):
        RaterId.objects.create(project=project, user=make_user(username, is_imported=username != "coder"),
                               number=number)
    page = client_for(project.created_by).get(f"/projects/{project.pk}/releases/",
                                              HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    table = page.split("<th>주석자 ID</th>")[1].split("</table>")[0]
    assert "<td>원본 말뭉치 라벨</td>" in table and "<td>말뭉치 주석자 8b100644</td>" in table
    assert "<td>coder</td>" in table and f"{project.slug}:" not in table
