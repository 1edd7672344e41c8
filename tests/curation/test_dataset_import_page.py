"""/review/datasets/import/: a researcher imports a public dataset file from the page, as
`import_dataset` does from the command line: frozen, the whole file or nothing, a bad line named."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from core.models import AuditEvent
from curation.models import Dataset, Item

pytestmark = pytest.mark.django_db

URS_CSV = (
    "question,reference_ans,user_intent,language\n"
    "What is the capital of France?,Paris.,Factual_QA,EN\n"
    "给我的猫起三个名字。,团子、年糕、芝麻。,Seek_Creativity,CN\n"
)
ALIGNBENCH = [
    {
        "question_id": 1,
        "category": "基本任务",
        "subcategory": "信息抽取",
        "question": "抽取人名。",
        "reference": "张三",
    },
    {"question_id": 2, "category": "数学计算", "subcategory": "代数", "question": "1+1=?", "reference": "2"},
]


def send(client, *, name="pilot", fmt="urs", content: str | bytes = URS_CSV, filename="pilot.csv"):
    body = content.encode() if isinstance(content, str) else content
    return client.post(
        reverse("curation:review-import"),
        {"name": name, "format": fmt, "description": "From the page", "file": SimpleUploadedFile(filename, body)},
    )


def test_a_urs_file_becomes_a_frozen_dataset_and_its_page_follows(client_as, researcher):
    client = client_as(researcher)
    page = client.get(reverse("curation:datasets")).text
    assert 'href="/review/datasets/import/"' in page and "import_dataset" not in page
    assert client.get(reverse("curation:review-import")).status_code == 200
    response = send(client)
    assert response.status_code == 302 and response["Location"] == "/datasets/pilot/"
    dataset = Dataset.objects.get(name="pilot")
    assert (dataset.source, dataset.frozen_at is not None, dataset.created_by, dataset.description) == (
        "urs",
        True,
        researcher,
        "From the page",
    )
    items = list(dataset.items.order_by("question").values_list("question", "reference", "intent", "language"))
    assert items == [
        ("What is the capital of France?", "Paris.", "factual_qa", "en"),
        ("给我的猫起三个名字。", "团子、年糕、芝麻。", "seek_creativity", "zh"),
    ]
    detail = client.get(response["Location"])
    assert "Imported 2 items into dataset pilot." in detail.text
    entry = AuditEvent.objects.get(action="dataset_imported")
    assert (entry.actor, entry.target, entry.details, entry.workspace_id) == (
        researcher,
        "dataset:pilot",
        {"format": "urs", "items": 2},
        dataset.workspace_id,
    )


def test_an_alignbench_file_keeps_its_ids_and_categories(client_as, researcher):
    content = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in ALIGNBENCH)
    assert send(client_as(researcher), fmt="alignbench", content=content, filename="a.jsonl").status_code == 302
    assert sorted(Item.objects.values_list("external_id", "category")) == [("1", "基本任务"), ("2", "数学计算")]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (URS_CSV + "A question,An answer,Not_An_Intent,EN\n", "line 4: "),
        (URS_CSV.replace("question,", "query,", 1), "line 1: expected the header question,reference_ans"),
        (URS_CSV.encode() + b"Bad \xff byte,x,Leisure,EN\n", "line 4: "),
    ],
    ids=["unknown intent", "wrong header", "not UTF-8"],
)
def test_a_bad_file_is_named_by_its_line_and_nothing_is_written(client_as, researcher, content, message):
    response = send(client_as(researcher), content=content)
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert list(errors) == ["file"] and errors["file"][0].startswith("Nothing imported.")
    assert message in errors["file"][0]
    assert not Dataset.objects.exists() and not Item.objects.exists()
    assert not AuditEvent.objects.filter(action="dataset_imported").exists()


def test_a_taken_name_is_an_error_on_the_name(client_as, researcher):
    client = client_as(researcher)
    send(client)
    response = send(client, content=URS_CSV.replace("Paris.", "Lyon?"))
    assert response.context["form"].errors == {
        "name": ["A dataset named 'pilot' exists already in this workspace; choose another name."]
    }
    client.cookies["django_language"] = "zh-hans"
    response = send(client, content=URS_CSV.replace("Paris.", "Lyon?"))
    assert response.context["form"].errors == {"name": ["此工作区已有名为 'pilot' 的数据集；请另选名称。"]}
    assert Item.objects.filter(reference="Lyon?").count() == 0


def test_only_researchers_import(client_as, reviewer, annotator):
    for person in (reviewer, annotator):
        client = client_as(person)
        assert client.get(reverse("curation:review-import")).status_code == 403
        assert send(client).status_code == 403
    assert not Dataset.objects.exists()


def test_a_file_over_the_upload_limit_is_refused_naming_the_limit(client_as, researcher, settings):
    from curation.datasets.forms import DatasetImportForm

    settings.UPLOAD_MAX_REQUEST_BYTES = 2 * 1024 * 1024
    big = SimpleUploadedFile("big.csv", URS_CSV.encode() + b"x" * (2 * 1024 * 1024))
    form = DatasetImportForm({"name": "big", "format": "urs"}, {"file": big})
    assert form.errors == {"file": ["The file is larger than 2 MB."]}
    # The page never reads such a body: it is refused from its length (core/body_limits.py).
    response = send(client_as(researcher), content=URS_CSV.encode() + b"x" * (2 * 1024 * 1024))
    assert response.status_code == 413 and not Dataset.objects.exists()
