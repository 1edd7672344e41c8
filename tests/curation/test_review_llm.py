"""Reference drafting and translation against a real OpenAI-compatible server on loopback,
driven by the real openai client, then the reference and translation review queues."""

import pytest

from curation.datasets.llm_prompts import LOCALISE_USER, REDRAFT_USER, REFERENCE_SYSTEM
from curation.datasets.llm_steps import MAX_ATTEMPTS, curation_job_run, reference_job_create, translation_job_create
from curation.datasets.services import VersionError
from curation.models import CurationJob, Item, ReferenceDraft, ReviewEvent, ReviewQueue, ReviewTask, Translation
from curation.review.services import ReviewError, reference_review_decide, review_task_lease, translation_review_decide
from tests.factories import DatasetFactory, ItemFactory
from tests.judging.fake_llm import FakeLLM

pytestmark = pytest.mark.django_db


def reply(body):
    prompt = body["messages"][-1]["content"]
    system = body["messages"][0]["content"]
    if "Please refer to the query" in prompt:
        query = prompt.split('converted: "', 1)[1].split('"', 1)[0]
        return f"“翻译：{query}”"
    if "请参考其它国家用户" in prompt:
        query = prompt.split('待转换的问题: "', 1)[1].split('"', 1)[0]
        return f"本地化：{query}"
    return ("参考答案：" if "中文" in system else "Reference: ") + prompt


@pytest.fixture
def llm(monkeypatch, settings):
    server = FakeLLM(reply=reply).start()
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings.JUDGING_RETRY_BASE_SECONDS = 0.001
    settings.JUDGING_RETRY_CAP_SECONDS = 0.002
    yield server
    server.stop()


@pytest.fixture
def working():
    dataset = DatasetFactory(name="work")
    ItemFactory(dataset=dataset, external_id="e1", question="What is DNS?", reference="", language="en")
    ItemFactory(dataset=dataset, external_id="z1", question="什么是DNS？", reference="", language="zh")
    ItemFactory(dataset=dataset, external_id="done", question="Has one", reference="Already", language="en")
    return dataset


def test_reference_drafts_per_language_stored_and_queued(llm, working, reviewer):
    job = reference_job_create(dataset=working, model="strong-m")
    assert job.total == 2  # the item with a reference is left alone
    job = curation_job_run(job_id=job.pk)
    assert (job.status, job.done, job.failed, llm.count) == ("done", 2, 0, 2)
    systems = sorted(body["messages"][0]["content"] for body in llm.requests)
    assert systems == sorted([REFERENCE_SYSTEM["en"], REFERENCE_SYSTEM["zh"]])
    assert {body["model"] for body in llm.requests} == {"strong-m"}
    drafts = {d.item.external_id: d.text for d in ReferenceDraft.objects.select_related("item")}
    assert drafts == {"e1": "Reference: What is DNS?", "z1": "参考答案：什么是DNS？"}
    assert ReviewTask.objects.filter(queue=ReviewQueue.REFERENCE, status="open").count() == 2
    # Running it again sends nothing: finished items are never re-sent.
    curation_job_run(job_id=job.pk)
    assert llm.count == 2


def test_a_failing_item_is_retried_then_marked_failed_and_the_rest_kept(llm, working):
    llm.faults = {"什么是DNS": ["500"] * 1000}
    job = curation_job_run(job_id=reference_job_create(dataset=working, model="m").pk)
    assert (job.status, job.done, job.failed) == ("failed", 1, 1)
    failed = ReferenceDraft.objects.get(status="failed")
    assert failed.attempts == MAX_ATTEMPTS
    assert "500" in failed.error
    assert job.last_error == failed.error
    assert ReferenceDraft.objects.get(status="done").item.external_id == "e1"


def test_reference_review_accept_correct_and_regenerate(
    llm, working, reviewer, settings, django_capture_on_commit_callbacks
):
    settings.TASKS = {
        "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "judging"]}
    }
    # One call at a time: the drafts, and so the queue, come in item order.
    curation_job_run(job_id=reference_job_create(dataset=working, model="m").pk, in_flight=1)
    first = review_task_lease(queue=ReviewQueue.REFERENCE, reviewer=reviewer)
    reference_review_decide(task=first, reviewer=reviewer, decision="accept")
    assert first.item.__class__.objects.get(pk=first.item_id).reference.startswith("Reference: ")

    second = review_task_lease(queue=ReviewQueue.REFERENCE, reviewer=reviewer)
    with pytest.raises(ReviewError, match="A corrected reference cannot be empty."):
        reference_review_decide(task=second, reviewer=reviewer, decision="correct", reference=" ")
    with django_capture_on_commit_callbacks(execute=True):
        reference_review_decide(task=second, reviewer=reviewer, decision="regenerate")
    second.refresh_from_db()
    # The new draft came back from the server and reopened the task.
    assert second.status == "open"
    assert ReferenceDraft.objects.filter(item_id=second.item_id, status="done").count() == 2
    # The model saw the draft the reviewer sent back: a new request, not the cached first one.
    assert llm.count == 3
    assert [message["role"] for message in llm.requests[-1]["messages"]] == ["system", "user", "assistant", "user"]
    assert llm.requests[-1]["messages"][2]["content"] == "参考答案：什么是DNS？"
    assert llm.requests[-1]["messages"][3]["content"] == REDRAFT_USER["zh"]
    again = review_task_lease(queue=ReviewQueue.REFERENCE, reviewer=reviewer)
    assert again.pk == second.pk
    reference_review_decide(task=again, reviewer=reviewer, decision="correct", reference="DNS 把域名解析为 IP 地址。")
    item = Item.objects.get(pk=second.item_id)
    assert item.reference == "DNS 把域名解析为 IP 地址。"
    corrected = ReviewEvent.objects.get(item=item, action="corrected")
    assert corrected.after["draft"] == "参考答案：" + REDRAFT_USER["zh"]  # both versions kept
    assert corrected.actor == reviewer
    assert [e.action for e in ReviewEvent.objects.filter(item=item)] == [
        "drafted",
        "regenerate",
        "drafted",
        "corrected",
    ]


def test_translation_two_prompts_then_calibration(llm, reviewer):
    dataset = DatasetFactory(name="cae")
    for index, question in enumerate(["Plan a trip to Paris", "Name a US president", "Sort a list", "Write a poem"]):
        ItemFactory(dataset=dataset, external_id=f"i{index}", question=question, reference="", language="en")
    job = curation_job_run(job_id=translation_job_create(dataset=dataset, model="m").pk)
    assert (job.status, job.done, llm.count) == ("done", 4, 8)
    assert LOCALISE_USER.format(query="翻译：Plan a trip to Paris") in llm.prompts()
    row = Translation.objects.get(item__external_id="i0")
    assert (row.source_text, row.translation, row.localised) == (
        "Plan a trip to Paris", "翻译：Plan a trip to Paris", "本地化：翻译：Plan a trip to Paris",
    )  # fmt: skip
    with pytest.raises(VersionError):
        translation_job_create(dataset=dataset, model="m")  # nothing left to translate

    decisions = {
        "i0": ("keep", "", []),
        "i1": ("revert", "", ["excessive_localisation"]),
        "i2": ("edit", "给列表排序", ["coherence"]),
        "i3": ("exclude", "", ["factual_illusion"]),
    }
    for _ in decisions:
        task = review_task_lease(queue=ReviewQueue.TRANSLATION, reviewer=reviewer)
        decision, text, tags = decisions[task.item.external_id]
        reason = "关于美国的诗，本地化后失去意义" if decision == "exclude" else ""
        translation_review_decide(task=task, reviewer=reviewer, decision=decision, text=text, tags=tags, reason=reason)
    assert review_task_lease(queue=ReviewQueue.TRANSLATION, reviewer=reviewer) is None
    items = {i.external_id: i for i in Item.objects.filter(dataset=dataset)}
    assert items["i0"].question == "本地化：翻译：Plan a trip to Paris" and items["i0"].language == "zh"
    assert items["i1"].question == "翻译：Name a US president"
    assert items["i2"].question == "给列表排序"
    assert items["i3"].excluded and items["i3"].question == "Write a poem"
    assert items["i3"].exclusion_reason == "关于美国的诗，本地化后失去意义"
    assert ReviewEvent.objects.get(item=items["i3"], action="excluded").reason == "关于美国的诗，本地化后失去意义"
    assert items["i0"].metadata["source_question"] == "Plan a trip to Paris"
    event = ReviewEvent.objects.get(item=items["i1"], action="reverted")
    assert event.tags == ["excessive_localisation"]
    assert event.before["question"] == "Name a US president"


def test_unknown_translation_tag_is_refused(llm, reviewer):
    dataset = DatasetFactory(name="cae2")
    ItemFactory(dataset=dataset, external_id="a", question="Sort a list", language="en")
    curation_job_run(job_id=translation_job_create(dataset=dataset, model="m").pk)
    task = review_task_lease(queue=ReviewQueue.TRANSLATION, reviewer=reviewer)
    with pytest.raises(ReviewError, match="Unknown tags: pretty."):
        translation_review_decide(task=task, reviewer=reviewer, decision="keep", tags=["pretty"])
    assert Item.objects.get(external_id="a").question == "Sort a list"


def test_without_an_endpoint_the_job_fails_with_a_clear_reason(monkeypatch, working):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    job = reference_job_create(dataset=working, model="m")
    with pytest.raises(ValueError, match="OPENAI_BASE_URL is not set"):
        curation_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == CurationJob.Status.FAILED and "OPENAI_BASE_URL" in job.last_error
    assert ReferenceDraft.objects.filter(status="pending").count() == 2


def test_the_job_row_shows_progress_while_it_runs(llm, working, monkeypatch):
    """The dataset page and `curation_llm` read done/failed from the job row mid-run."""
    import curation.datasets.llm_steps

    monkeypatch.setattr(curation.datasets.llm_steps, "PROGRESS_EVERY_SECONDS", 0.0)
    seen = []
    job = reference_job_create(dataset=working, model="m")
    curation_job_run(
        job_id=job.pk,
        in_flight=1,
        on_progress=lambda current: seen.append(CurationJob.objects.values_list("done", flat=True).get(pk=current.pk)),
    )
    assert seen == [1, 2]


def test_accepting_the_draft_over_a_correction_is_refused(llm, working, reviewer):
    curation_job_run(job_id=reference_job_create(dataset=working, model="m").pk, in_flight=1)
    task = review_task_lease(queue=ReviewQueue.REFERENCE, reviewer=reviewer)
    draft = ReferenceDraft.objects.get(item_id=task.item_id).text
    with pytest.raises(ReviewError, match="^You changed the draft: save the correction, or undo your change"):
        reference_review_decide(task=task, reviewer=reviewer, decision="accept", reference="A better reference.")
    assert Item.objects.get(pk=task.item_id).reference == ""
    # The draft as the browser sends it back accepts it.
    reference_review_decide(task=task, reviewer=reviewer, decision="accept", reference=draft.replace("\n", "\r\n"))
    assert Item.objects.get(pk=task.item_id).reference == draft


def test_translation_exclude_needs_a_reason_and_keep_never_drops_an_edit(llm, reviewer):
    dataset = DatasetFactory(name="cae3")
    ItemFactory(dataset=dataset, external_id="a", question="Name a US state", language="en")
    curation_job_run(job_id=translation_job_create(dataset=dataset, model="m").pk)
    task = review_task_lease(queue=ReviewQueue.TRANSLATION, reviewer=reviewer)
    localised = Translation.objects.get().localised
    with pytest.raises(ReviewError, match="^Give a reason for excluding.$"):
        translation_review_decide(task=task, reviewer=reviewer, decision="exclude", reason=" ")
    with pytest.raises(ReviewError, match="^You wrote a reason: exclude the item, or clear the reason first.$"):
        translation_review_decide(task=task, reviewer=reviewer, decision="keep", reason="Too American")
    with pytest.raises(ReviewError, match="^You edited the instruction: save the edit, or undo your change first.$"):
        translation_review_decide(task=task, reviewer=reviewer, decision="keep", text="说出中国的一个省")
    with pytest.raises(ReviewError, match="^You edited the instruction"):
        translation_review_decide(task=task, reviewer=reviewer, decision="revert", text="说出中国的一个省")
    with pytest.raises(ReviewError, match="^The reason has 201 characters; keep it to 200.$"):
        translation_review_decide(task=task, reviewer=reviewer, decision="exclude", reason="x" * 201)
    item = Item.objects.get(external_id="a")
    assert (item.question, item.excluded) == ("Name a US state", False)
    assert not ReviewEvent.objects.filter(item=item).exclude(action="translated").exists()
    translation_review_decide(task=task, reviewer=reviewer, decision="keep", text=localised + "\r\n")
    assert Item.objects.get(external_id="a").question == localised


def test_a_failed_redraft_comes_back_to_the_queue_with_its_error(
    llm, working, reviewer, settings, django_capture_on_commit_callbacks
):
    from curation.review.selectors import latest_draft_attempt, reference_redrafts

    settings.TASKS = {
        "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "judging"]}
    }
    curation_job_run(job_id=reference_job_create(dataset=working, model="m").pk, in_flight=1)
    task = review_task_lease(queue=ReviewQueue.REFERENCE, reviewer=reviewer)
    llm.faults = {REDRAFT_USER[task.item.language]: ["500"] * 1000}
    with django_capture_on_commit_callbacks(execute=True):
        reference_review_decide(task=task, reviewer=reviewer, decision="regenerate")
    task.refresh_from_db()
    # Not left waiting for ever: back in the queue, and the queues page and its page say why.
    assert task.status == "open"
    [row] = reference_redrafts()["rows"]
    assert (row["item_id"], row["state"], row["attempts"]) == (task.item_id, "failed", MAX_ATTEMPTS)
    assert "500" in row["error"]
    attempt = latest_draft_attempt(item=task.item)
    assert attempt["state"] == "failed" and attempt["error"] == row["error"]
    again = review_task_lease(queue=ReviewQueue.REFERENCE, reviewer=reviewer)
    assert again.pk == task.pk
    reference_review_decide(task=again, reviewer=reviewer, decision="correct", reference="DNS 把域名解析为 IP 地址。")
    assert reference_redrafts() == {"count": 0, "rows": []}


def test_a_redraft_without_an_endpoint_comes_back_to_the_queue(
    llm, working, reviewer, monkeypatch, settings, django_capture_on_commit_callbacks
):
    from curation.review.selectors import reference_redrafts

    curation_job_run(job_id=reference_job_create(dataset=working, model="m").pk, in_flight=1)
    task = review_task_lease(queue=ReviewQueue.REFERENCE, reviewer=reviewer)
    # The redraft waits for a worker: the page lists it as waiting for the model.
    with django_capture_on_commit_callbacks(execute=False):
        reference_review_decide(task=task, reviewer=reviewer, decision="regenerate")
    assert [row["state"] for row in reference_redrafts()["rows"]] == ["pending"]
    job = CurationJob.objects.latest("id")
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(ValueError, match="OPENAI_BASE_URL is not set"):
        curation_job_run(job_id=job.pk)
    task.refresh_from_db()
    assert task.status == "open"
    [row] = reference_redrafts()["rows"]
    assert row["state"] == "failed" and "OPENAI_BASE_URL is not set" in row["error"]


def test_the_queues_page_and_the_item_show_a_failed_redraft(
    llm, working, reviewer, client_as, settings, django_capture_on_commit_callbacks
):
    settings.TASKS = {
        "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "judging"]}
    }
    curation_job_run(job_id=reference_job_create(dataset=working, model="strong-m").pk, in_flight=1)
    client = client_as(reviewer)
    task = ReviewTask.objects.filter(queue=ReviewQueue.REFERENCE).order_by("id").first()
    client.post("/review/take/reference/")
    llm.faults = {REDRAFT_USER["en"]: ["500"] * 1000}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/review/task/{task.pk}/", {"decision": "regenerate", "reference": "x"}, follow=True)
    assert "A new draft was asked for. The item comes back to this queue when it arrives" in response.text
    page = client.get("/review/").text
    assert "Drafting again: 1 item</h2>" in page
    assert '<tr data-state="failed"><td><a href="/review/items/' in page
    assert "Back in the queue for a person to correct." in page
    # The other item was leased next; give it back and take the one that came back.
    client.post(f"/review/task/{ReviewTask.objects.get(leased_to=reviewer).pk}/release/")
    assert client.post("/review/take/reference/")["Location"] == f"/review/task/{task.pk}/"
    page = client.get(f"/review/task/{task.pk}/").text
    assert '<p class="message error" data-testid="redraft-failed">Drafting again with strong-m failed: ' in page
    assert "Correct the reference yourself, or ask for a new draft again." in page


def test_every_call_has_a_max_tokens_and_a_cut_off_reply_is_never_a_draft(llm, working, settings):
    settings.LLM_MAX_TOKENS = {**settings.LLM_MAX_TOKENS, "reference": 900, "translation": 300}
    llm.faults = {"什么是DNS": ["length"]}
    job = curation_job_run(job_id=reference_job_create(dataset=working, model="m").pk)
    assert {body["max_tokens"] for body in llm.requests} == {900}
    cut = ReferenceDraft.objects.get(item__external_id="z1")
    # Failed at once: the same request would get the same reply from the cache.
    assert (cut.status, cut.text, cut.attempts) == ("failed", "", 1)
    assert cut.error == "cut off at max_tokens (900): raise --max-tokens and run again"
    assert (job.done, job.failed, llm.count) == (1, 1, 2)
    from curation.datasets.llm_steps import job_cut_off_count

    assert job_cut_off_count(job) == 1

    sent = llm.count
    job = curation_job_run(job_id=translation_job_create(dataset=working, model="m").pk, max_tokens=120)
    assert {body["max_tokens"] for body in llm.requests[sent:]} == {120}


def test_a_prompt_too_long_for_the_model_fails_at_once(llm, working):
    llm.faults = {"What is DNS": ["400"]}
    job = curation_job_run(job_id=reference_job_create(dataset=working, model="m").pk)
    failed = ReferenceDraft.objects.get(item__external_id="e1")
    assert (failed.status, failed.attempts, failed.error) == ("failed", 1, "HTTP 400: bad request: context too long")
    assert (job.done, job.failed, llm.count) == (1, 1, 2)
