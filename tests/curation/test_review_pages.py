"""The reviewer's pages through the test client: permissions, leases, decisions, escaping."""

import pytest
from django.urls import reverse

from curation.datasets.services import dataset_freeze
from curation.models import Case, ReviewTask
from tests.curation.review_helpers import review_study, reviewer2, submitted_cases  # noqa: F401
from tests.factories import DatasetFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert("x")</script>'


def test_queues_need_the_reviewer_role(client, client_as, annotator):
    response = client.get("/review/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert client_as(annotator).get("/review/").status_code == 403
    assert client.post("/review/take/quality/").status_code == 403


def test_index_shows_progress_per_queue(client_as, reviewer, review_study):
    submitted_cases(review_study, ["Q: What is DNS exactly?\nA: x", "Q: What is TCP exactly?\nA: y"])
    page = client_as(reviewer).get("/review/").text
    assert '<tr data-queue="quality">' in page
    assert '<td class="num" data-label="Waiting for you">2</td>' in page and "0 / 2" in page


def test_take_decide_and_move_on(client_as, reviewer, review_study):
    first, second = submitted_cases(
        review_study,
        [f"Q: What is DNS exactly? {HOSTILE} mail me a@example.com\nA: x", "Q: What is TCP exactly?\nA: y"],
    )
    client = client_as(reviewer)
    response = client.post("/review/take/quality/")
    task = ReviewTask.objects.get(case=first)
    assert response["Location"] == f"/review/task/{task.pk}/"
    page = client.get(response["Location"]).text
    assert HOSTILE not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert '<mark class="pii" title="e-mail address">a@example.com</mark>' in page
    # A case with possible personal information is never accepted from the keyboard.
    assert "data-no-keyboard-accept" in page and 'data-key="a"' not in page and 'data-key="r"' in page
    assert "curation/review.js" in page

    response = client.post(f"/review/task/{task.pk}/", {"decision": "reject", "reason": ""})
    assert response.status_code == 200
    assert '<p class="message error" role="alert">Give a reason for rejecting.</p>' in response.text
    response = client.post(f"/review/task/{task.pk}/", {"decision": "reject", "reason": "Has an email address"})
    following = ReviewTask.objects.get(case=second)
    assert response["Location"] == f"/review/task/{following.pk}/"
    assert Case.objects.get(pk=first.pk).review_status == "rejected"
    response = client.post(f"/review/task/{following.pk}/", {"decision": "accept"})
    assert response["Location"] == "/review/"


def test_another_reviewers_item_is_not_shown(client_as, reviewer, reviewer2, review_study):
    submitted_cases(review_study, ["Q: What is DNS exactly?\nA: x"])
    client_as(reviewer).post("/review/take/quality/")
    task = ReviewTask.objects.get()
    client = client_as(reviewer2)
    response = client.get(f"/review/task/{task.pk}/")
    assert response["Location"] == "/review/"
    response = client.post(f"/review/task/{task.pk}/", {"decision": "accept"})
    assert Case.objects.get().review_status == "pending"


def test_item_page_shows_the_whole_history_in_chinese(client_as, reviewer, researcher, review_study):
    [case] = submitted_cases(review_study, ["Q: What is DNS exactly?\nA: x"])
    client = client_as(reviewer)
    client.post("/review/take/quality/")
    task = ReviewTask.objects.get()
    client.post(f"/review/task/{task.pk}/", {"decision": "edit", "question": "What does DNS do?"})
    from curation.datasets.services import study_dataset_build

    dataset, _ = study_dataset_build(study=review_study, name="rs-work")
    item = dataset.items.get()
    page = client.get(f"/review/items/{item.pk}/", HTTP_ACCEPT_LANGUAGE="zh-hans").text
    assert "历史" in page
    assert "What is DNS exactly?" in page and "What does DNS do?" in page
    assert page.index("自动步骤已运行") < page.index("编辑后接受") < page.index("加入数据集")
    assert client_as(UserFactory(username="nobody")).get(f"/review/items/{item.pk}/").status_code == 403


def test_freeze_and_diff_pages_are_for_researchers(client_as, researcher, reviewer):
    working = DatasetFactory(name="w")
    ItemFactory(dataset=working, external_id="a", question="Q1", reference="R1")
    assert client_as(reviewer).post(f"/review/datasets/{working.pk}/freeze/").status_code == 403
    client = client_as(researcher)
    response = client.post(f"/review/datasets/{working.pk}/freeze/")
    assert response["Location"] == f"/review/datasets/{working.pk}/"
    ItemFactory(dataset=working, external_id="b", question="Q2")
    v2 = dataset_freeze(dataset=working, confirm_missing_references=True)
    page = client.get(reverse("curation:review-dataset", kwargs={"dataset_id": working.pk})).text
    assert "w@v1" in page and "w@v2" in page
    v1 = v2.previous_version
    page = client.get(f"/review/diff/{v1.pk}/{v2.pk}/").text
    assert '<p data-testid="diff-summary">1 added, 0 removed, 0 changed, 1 unchanged.</p>' in page


def test_researcher_builds_starts_a_job_and_filters_from_the_pages(
    client_as, researcher, review_study, settings, django_capture_on_commit_callbacks
):
    from curation.models import CaseCuration, CurationJob, Dataset
    from tests.factories import CandidateModelFactory, JudgeRunFactory, JudgmentFactory

    settings.TASKS = {
        "default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend", "QUEUES": ["default", "judging"]}
    }
    [case] = submitted_cases(review_study, ["Q: What is DNS exactly?\nA: x"])
    Case.objects.filter(pk=case.pk).update(review_status="accepted")
    client = client_as(researcher)
    response = client.post("/review/datasets/build/", {"study": "rs", "name": "rs-work"})
    dataset = Dataset.objects.get(name="rs-work")
    assert response["Location"] == f"/review/datasets/{dataset.pk}/"
    assert dataset.items.get().question == CaseCuration.objects.get().question
    response = client.post("/review/datasets/build/", {"study": "rs", "name": ""}, follow=True)
    assert "Choose a study and give the dataset a name." in response.text

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/review/datasets/{dataset.pk}/jobs/", {"kind": "reference", "model": "strong"}, follow=True
        )
    job = CurationJob.objects.get()
    assert (job.kind, job.model, job.total) == ("reference", "strong", 1)
    assert f"Job {job.pk} started for 1 items with strong." in response.text
    response = client.post(f"/review/datasets/{dataset.pk}/jobs/", {"kind": "reference"}, follow=True)
    assert "No item needs a reference draft." in response.text

    run = JudgeRunFactory(dataset=dataset)
    JudgmentFactory(run=run, item=dataset.items.get(), model=CandidateModelFactory(name="f"), final_score=9)
    response = client.post(f"/review/datasets/{dataset.pk}/difficulty/", {"run": run.pk, "percent": "100"}, follow=True)
    assert "1 of 1 items excluded." in response.text
    response = client.post(f"/review/datasets/{dataset.pk}/difficulty/", {"run": "x"}, follow=True)
    assert "Give the number of an existing judge run and a whole percentage." in response.text


def test_queue_page_query_count_does_not_grow_with_tasks(client_as, reviewer, review_study, django_assert_num_queries):
    client = client_as(reviewer)
    submitted_cases(review_study, ["Q: What is DNS exactly?\nA: x"])
    client.get("/review/")  # warm the session
    # Session, user with roles, one aggregate over the queues, the items drafting again.
    with django_assert_num_queries(4):
        client.get("/review/")
    submitted_cases(review_study, [f"Q: Tell me about planet number {n} please\nA: x" for n in range(6)])
    with django_assert_num_queries(4):
        client.get("/review/")


def test_a_frozen_items_page_shows_the_history_of_its_working_item(client_as, reviewer, review_study):
    from curation.datasets.services import study_dataset_build

    [case] = submitted_cases(review_study, ["Q: What is DNS exactly?\nA: x"])
    client = client_as(reviewer)
    client.post("/review/take/quality/")
    client.post(f"/review/task/{ReviewTask.objects.get().pk}/", {"decision": "edit", "question": "What does DNS do?"})
    working, _ = study_dataset_build(study=review_study, name="rs-work")
    version = dataset_freeze(dataset=working, created_by=reviewer, confirm_missing_references=True)
    frozen = version.items.get()
    page = client.get(f"/review/items/{frozen.pk}/").text
    for action in ("Automatic steps run", "Edited and accepted", "Added to a dataset", "Frozen into a version"):
        assert action in page
    assert page.count("<tr>") == 1 + 4  # the header row and four events
