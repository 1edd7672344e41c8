"""/datasets/ and /datasets/<name>/: every dataset, its versions and its items, searched and
filtered, with each item's history and export links; a working copy in one step."""

import pytest
from django.urls import reverse
from django.utils import timezone

from curation.choices import Intent
from curation.datasets.services import dataset_freeze
from curation.models import Dataset, ReviewEvent, ReviewQueue, ReviewTask
from tests.factories import DatasetFactory, ItemFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def imported():
    dataset = DatasetFactory(name="ab-import", source="alignbench", frozen_at=timezone.now())
    ItemFactory(dataset=dataset, external_id="m1", question="计算 2+3", category="数学计算", language="zh", intent="")
    ItemFactory(dataset=dataset, external_id="m2", question="What is <b>DNS</b>?", intent=Intent.FACTUAL_QA)
    ItemFactory(
        dataset=dataset,
        external_id="w1",
        question="写一首诗",
        reference="",
        category="文本写作",
        language="zh",
        intent="",
    )
    ItemFactory(dataset=dataset, external_id="x1", question="Dropped", excluded=True, exclusion_reason="duplicate")
    return dataset


def rows(page: str) -> list[str]:
    return [chunk.split("</code>")[0] for chunk in page.split("<td><code>")[1:]]


def test_dataset_pages_are_for_researchers(client, client_as, reviewer, imported):
    for url in (reverse("curation:datasets"), reverse("curation:dataset-detail", args=["ab-import"])):
        client.logout()
        assert client.get(url).status_code == 302
        assert client_as(reviewer).get(url).status_code == 403
    assert client.post(reverse("curation:review-copy"), {"dataset": "ab-import"}).status_code == 403
    assert Dataset.objects.count() == 1


def test_list_shows_every_kind_with_counts_and_exports(client_as, researcher, imported):
    working = DatasetFactory(name="study-work")
    ItemFactory(dataset=working, external_id="s1")
    version = dataset_freeze(dataset=working)
    page = client_as(researcher).get(reverse("curation:datasets")).text
    for name in ("ab-import", "study-work", "study-work@v1"):
        assert f'href="/datasets/{name}/"' in page
    assert "imported (frozen)" in page and "frozen version 1" in page and ">working<" in page
    assert '<td class="num">4</td><td class="num">1</td>' in page
    assert "/api/exports/items/?dataset=study-work%40v1&amp;format=csv" in page
    assert version.name == "study-work@v1"


@pytest.mark.parametrize(
    "query,expected",
    [
        ({}, ["m1", "m2", "w1", "x1"]),
        ({"q": "dns"}, ["m2"]),
        ({"q": "W1"}, ["w1"]),
        ({"intent": "factual_qa"}, ["m2", "x1"]),
        ({"language": "zh"}, ["m1", "w1"]),
        ({"category": "数学计算"}, ["m1"]),
        ({"status": "excluded"}, ["x1"]),
        ({"status": "included"}, ["m1", "m2", "w1"]),
        ({"status": "no_reference"}, ["w1"]),
        ({"status": "in_review"}, ["m2"]),
        ({"language": "zh", "status": "no_reference"}, ["w1"]),
        ({"status": "bogus"}, ["m1", "m2", "w1", "x1"]),
    ],
)
def test_items_are_searched_and_filtered(client_as, researcher, imported, query, expected):
    ReviewTask.objects.create(queue=ReviewQueue.REFERENCE, item=imported.items.get(external_id="m2"))
    page = client_as(researcher).get(reverse("curation:dataset-detail", args=["ab-import"]), query).text
    assert rows(page) == expected


def test_detail_escapes_text_and_links_history_and_exports(client_as, researcher, imported):
    page = client_as(researcher).get(reverse("curation:dataset-detail", args=["ab-import"])).text
    assert "What is &lt;b&gt;DNS&lt;/b&gt;?" in page and "<b>DNS</b>" not in page
    item = imported.items.get(external_id="m1")
    assert f'href="/review/items/{item.pk}/"' in page
    for table in ("items", "answers", "judgments", "votes"):
        assert f"/api/exports/{table}/?dataset=ab-import&amp;format=jsonl" in page
    assert "4 items" in page and "4, of which 1 excluded" in page
    assert '<option value="数学计算">数学计算</option>' in page
    history = client_as(researcher).get(f"/review/items/{item.pk}/")
    assert history.status_code == 200


def test_items_are_paged_keeping_the_filters(client_as, researcher):
    dataset = DatasetFactory(name="big")
    for n in range(60):
        ItemFactory(dataset=dataset, external_id=f"q{n:03d}", language="zh" if n % 2 else "en")
    client = client_as(researcher)
    page = client.get(reverse("curation:dataset-detail", args=["big"]), {"language": "zh"}).text
    assert len(rows(page)) == 30 and "30 items" in page
    page = client.get(reverse("curation:dataset-detail", args=["big"])).text
    assert len(rows(page)) == 50 and "Page 1 of 2" in page and "?page=2" in page
    page = client.get(reverse("curation:dataset-detail", args=["big"]), {"page": 2, "q": "q05"}).text
    assert rows(page) == [f"q05{n}" for n in range(10)]


def test_working_copy_button_makes_the_copy_in_one_step(client_as, researcher, imported):
    client = client_as(researcher)
    page = client.get(reverse("curation:dataset-detail", args=["ab-import"])).text
    assert 'value="ab-import-work"' in page and "Make a working copy" in page
    response = client.post(reverse("curation:review-copy"), {"dataset": "ab-import", "name": "ab-import-work"})
    copy = Dataset.objects.get(name="ab-import-work")
    assert response["Location"] == reverse("curation:review-dataset", args=[copy.pk])
    assert copy.items.count() == 4 and copy.frozen_at is None and copy.previous_version == imported
    assert ReviewEvent.objects.filter(item__dataset=copy, actor=researcher).count() == 4
    again = client.post(
        reverse("curation:review-copy"), {"dataset": "ab-import", "name": "ab-import-work"}, follow=True
    )
    assert "The working copy ab-import-work exists already; here it is." in again.text
    assert Dataset.objects.count() == 2
    page = client.get(reverse("curation:dataset-detail", args=["ab-import"])).text
    assert f'href="/review/datasets/{copy.pk}/">ab-import-work</a>' in page
    bad = client.post(reverse("curation:review-copy"), {"dataset": "ab-import-work"}, follow=True)
    assert "Dataset ab-import-work is already a working dataset." in bad.text


def test_dataset_page_speaks_chinese(client_as, researcher, imported):
    client = client_as(researcher)
    client.cookies["django_language"] = "zh-hans"
    page = client.get(reverse("curation:dataset-detail", args=["ab-import"])).text
    assert "制作工作副本" in page and "导出：" in page and "历史" in page
    page = client.get(reverse("curation:datasets")).text
    assert "<h1>数据集</h1>" in page
