"""A failed reference or translation job started again, from its page and from `curation_llm`,
on another endpoint if its own is down: what succeeded is kept and never sent again, counted at
two real OpenAI-compatible servers on loopback."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from curation.datasets.llm_prompts import REDRAFT_USER
from curation.datasets.llm_steps import (
    MAX_ATTEMPTS,
    CurationJobError,
    curation_job_restart,
    curation_job_run,
    reference_job_create,
    translation_job_create,
)
from curation.models import CurationJob, Item, ReferenceDraft, ReviewQueue, ReviewTask, Translation
from curation.review.selectors import reference_redrafts
from curation.review.services import reference_review_decide, review_task_lease
from llm.errors import EndpointError
from llm.models import Endpoint
from tests.factories import DatasetFactory, ItemFactory
from tests.judging.fake_llm import FakeLLM

pytestmark = pytest.mark.django_db

ALWAYS = 10_000  # a fault that never runs out


def reply(body):
    prompt = body["messages"][-1]["content"]
    if "Please refer to the query" in prompt:
        return "翻译：" + prompt.split('converted: "', 1)[1].split('"', 1)[0]
    if "请参考其它国家用户" in prompt:
        return "本地化：" + prompt.split('待转换的问题: "', 1)[1].split('"', 1)[0]
    return "Reference: " + prompt


@pytest.fixture
def servers(monkeypatch, settings):
    """Two endpoints: `primary` (the jobs' own, which fails as each test says) and `backup`."""
    settings.JUDGING_RETRY_BASE_SECONDS = 0.001
    settings.JUDGING_RETRY_CAP_SECONDS = 0.002
    settings.TASKS = {
        "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "judging"]}
    }
    primary, backup = FakeLLM(reply=reply).start(), FakeLLM(reply=reply).start()
    Endpoint.objects.create(name="primary", base_url=primary.base_url, max_retries=1)
    Endpoint.objects.create(name="backup", base_url=backup.base_url, max_retries=1)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    yield primary, backup
    primary.stop()
    backup.stop()


@pytest.fixture
def working():
    dataset = DatasetFactory(name="work")
    for external_id, question in [("a", "What is DNS?"), ("b", "What is TCP?"), ("c", "What is UDP?")]:
        ItemFactory(dataset=dataset, external_id=external_id, question=question, reference="", language="en")
    return dataset


def failed_reference_job(primary, working):
    """A reference job at `primary` where b's calls always fail: a and c are drafted, b is not."""
    primary.faults = {"What is TCP?": ["500"] * ALWAYS}
    job = curation_job_run(job_id=reference_job_create(dataset=working, model="m", endpoint_name="primary").pk)
    assert (job.status, job.done, job.failed) == ("failed", 2, 1)
    return job


def drafts() -> dict[str, tuple[str, str]]:
    return {row.item.external_id: (row.status, row.text) for row in ReferenceDraft.objects.select_related("item")}


def test_a_failed_job_restarted_at_another_endpoint_sends_only_what_failed(servers, working):
    primary, backup = servers
    job = failed_reference_job(primary, working)
    paid_at_primary = primary.count
    assert paid_at_primary == 2 + (1 + 1) * MAX_ATTEMPTS  # a, c, and b's attempts with one retry each
    before = drafts()

    job, count = curation_job_restart(job_id=job.pk, endpoint_name="backup")
    assert (count, job.status, job.endpoint_name, job.failed, job.last_error) == (1, "pending", "backup", 0, "")
    assert ReferenceDraft.objects.get(item__external_id="b").attempts == 0
    job = curation_job_run(job_id=job.pk)

    assert (job.status, job.done, job.failed, job.last_error) == ("done", 3, 0, "")
    assert backup.prompts() == ["What is TCP?"]
    assert primary.count == paid_at_primary
    after = drafts()
    assert after["a"] == before["a"] and after["c"] == before["c"]  # kept as they were
    assert after["b"] == ("done", "Reference: What is TCP?")
    assert ReviewTask.objects.filter(queue=ReviewQueue.REFERENCE, status="open").count() == 3


def test_restarted_at_its_own_endpoint_once_it_is_back(servers, working):
    primary, _backup = servers
    job = failed_reference_job(primary, working)
    paid = primary.count
    primary.faults = {}
    job = curation_job_run(job_id=curation_job_restart(job_id=job.pk)[0].pk)
    assert (job.status, job.endpoint_name) == ("done", "primary")
    assert primary.count == paid + 1 and primary.prompts()[-1] == "What is TCP?"


def test_a_translation_whose_first_step_succeeded_only_sends_its_second(servers):
    primary, backup = servers
    dataset = DatasetFactory(name="cae")
    for external_id, question in [("p", "Plan a trip to Paris"), ("s", "Sort a list")]:
        ItemFactory(dataset=dataset, external_id=external_id, question=question, reference="", language="en")
    # Step 2 (localisation) of "Sort a list" fails; its step 1 (translation) went through.
    primary.faults = {"翻译：Sort a list": ["500"] * ALWAYS}
    job = curation_job_run(job_id=translation_job_create(dataset=dataset, model="m", endpoint_name="primary").pk)
    assert (job.status, job.done, job.failed) == ("failed", 1, 1)
    paid = primary.count

    job, count = curation_job_restart(job_id=job.pk, endpoint_name="backup")
    assert count == 1
    assert Translation.objects.get(item__external_id="s").status == "translated"
    job = curation_job_run(job_id=job.pk)
    assert (job.status, job.done) == ("done", 2)
    assert len(backup.requests) == 1 and "翻译：Sort a list" in backup.prompts()[0]
    assert primary.count == paid
    row = Translation.objects.get(item__external_id="s")
    assert (row.translation, row.localised) == ("翻译：Sort a list", "本地化：翻译：Sort a list")


def test_a_job_that_never_reached_its_endpoint_restarts_at_a_named_one(servers, working):
    _primary, backup = servers
    job = reference_job_create(dataset=working, model="m")  # the default endpoint, which is not set
    with pytest.raises(EndpointError, match="OPENAI_BASE_URL is not set"):
        curation_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "failed" and "OPENAI_BASE_URL is not set" in job.last_error

    job = curation_job_run(job_id=curation_job_restart(job_id=job.pk, endpoint_name="backup")[0].pk)
    assert (job.status, job.done, backup.count) == ("done", 3, 3)


def test_a_restart_that_cannot_be_done_changes_nothing(servers, working):
    primary, _backup = servers
    job = failed_reference_job(primary, working)
    with pytest.raises(EndpointError, match="Unknown endpoint 'nowhere'; known endpoints: backup, primary."):
        curation_job_restart(job_id=job.pk, endpoint_name="nowhere")
    job.refresh_from_db()
    assert (job.status, job.endpoint_name, job.failed) == ("failed", "primary", 1)
    assert ReferenceDraft.objects.get(item__external_id="b").status == "failed"

    primary.faults = {}
    curation_job_run(job_id=curation_job_restart(job_id=job.pk)[0].pk)
    with pytest.raises(CurationJobError, match=f"^Job {job.pk} is done: only a failed job can be started again.$"):
        curation_job_restart(job_id=job.pk)
    with pytest.raises(CurationJobError, match="^There is no curation job 999999.$"):
        curation_job_restart(job_id=999_999)


def restart_queries(rows: int) -> int:
    """Queries a restart makes for a failed reference job of `rows` failed rows."""
    dataset = DatasetFactory(name=f"many-{rows}")
    for n in range(rows):
        ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"q{n}?", reference="", language="en")
    job = reference_job_create(dataset=dataset, model="m", endpoint_name="primary")
    ReferenceDraft.objects.filter(job=job).update(status="failed", attempts=3, error="HTTP 500")
    CurationJob.objects.filter(pk=job.pk).update(status="failed")
    with CaptureQueriesContext(connection) as queries:
        _job, count = curation_job_restart(job_id=job.pk, endpoint_name="backup")
    assert count == rows
    return len(queries)


def test_a_restart_makes_as_many_queries_for_thirty_rows_as_for_three(servers):
    assert restart_queries(30) == restart_queries(3)


def test_an_item_a_reviewer_wrote_meanwhile_is_not_sent_again(servers, working, reviewer):
    primary, backup = servers
    job = failed_reference_job(primary, working)
    Item.objects.filter(external_id="b").update(reference="TCP is a reliable byte stream.")
    with pytest.raises(CurationJobError, match=f"^Nothing of job {job.pk} needs sending again"):
        curation_job_restart(job_id=job.pk, endpoint_name="backup")
    assert backup.count == 0
    assert CurationJob.objects.get(pk=job.pk).status == "failed"


def redraft_that_fails(primary, working, reviewer, capture_on_commit):
    """A drafted item whose reviewer asks for a new draft, which the primary endpoint fails to
    write: its review task, waiting."""
    primary.faults = {}
    curation_job_run(job_id=reference_job_create(dataset=working, model="m", endpoint_name="primary").pk, in_flight=1)
    task = review_task_lease(queue=ReviewQueue.REFERENCE, reviewer=reviewer)
    primary.faults = {REDRAFT_USER["en"]: ["500"] * ALWAYS}
    with capture_on_commit(execute=True):
        reference_review_decide(task=task, reviewer=reviewer, decision="regenerate")
    return task


def test_a_failed_draft_again_restarted_waits_for_its_draft_then_comes_back(
    servers, working, reviewer, django_capture_on_commit_callbacks
):
    primary, backup = servers
    task = redraft_that_fails(primary, working, reviewer, django_capture_on_commit_callbacks)
    redraft = CurationJob.objects.latest("id")
    assert redraft.status == "failed"
    assert [row["state"] for row in reference_redrafts()["rows"]] == ["failed"]

    # Started again but not yet run: the item waits for its draft, and no reviewer can take it.
    with django_capture_on_commit_callbacks(execute=False):
        curation_job_restart(job_id=redraft.pk, endpoint_name="backup")
    task.refresh_from_db()
    assert task.status == "waiting"
    assert [row["state"] for row in reference_redrafts()["rows"]] == ["pending"]

    curation_job_run(job_id=redraft.pk)
    task.refresh_from_db()
    assert task.status == "open"
    assert reference_redrafts() == {"count": 0, "rows": []}
    assert backup.requests[-1]["messages"][-1]["content"] == REDRAFT_USER["en"]
    assert backup.count == 1


def test_an_item_a_reviewer_holds_is_left_to_them(servers, working, reviewer, django_capture_on_commit_callbacks):
    primary, backup = servers
    task = redraft_that_fails(primary, working, reviewer, django_capture_on_commit_callbacks)
    again = review_task_lease(queue=ReviewQueue.REFERENCE, reviewer=reviewer)
    assert again.pk == task.pk and again.lease_expires_at > timezone.now()
    with pytest.raises(CurationJobError, match="needs sending again"):
        curation_job_restart(job_id=CurationJob.objects.latest("id").pk, endpoint_name="backup")
    again.refresh_from_db()
    assert (again.status, again.leased_to) == ("open", reviewer)


def drafts_cannot_be_saved(monkeypatch):
    """A crash while storing results (say, the database went away), made in Django's cursor
    layer so that our code sees the exception it would see. Returns the undo."""
    from django.db.backends.utils import CursorWrapper

    real_execute = CursorWrapper.execute

    def broken(self, sql, params=None):
        if "curation_referencedraft" in sql and sql.lstrip().upper().startswith("UPDATE"):
            raise RuntimeError("database went away")
        return real_execute(self, sql, params)

    monkeypatch.setattr(CursorWrapper, "execute", broken)
    return lambda: monkeypatch.setattr(CursorWrapper, "execute", real_execute)


def test_an_unexpected_crash_marks_the_job_failed_so_it_can_be_restarted(servers, working, monkeypatch):
    primary, backup = servers
    primary.faults = {}
    job = reference_job_create(dataset=working, model="m", endpoint_name="primary")
    undo = drafts_cannot_be_saved(monkeypatch)
    with pytest.raises(RuntimeError):
        curation_job_run(job_id=job.pk, in_flight=1)
    undo()
    job.refresh_from_db()
    assert (job.status, job.last_error) == ("failed", "RuntimeError: database went away")
    paid = primary.count
    job = curation_job_run(job_id=curation_job_restart(job_id=job.pk)[0].pk)
    assert (job.status, job.done) == ("done", 3)
    # The replies paid for before the crash come from the response cache: the server sees no new call.
    assert primary.count == paid


def test_a_draft_again_that_crashes_is_shown_to_the_reviewer_not_left_waiting(
    servers, working, reviewer, monkeypatch, django_capture_on_commit_callbacks
):
    primary, _backup = servers
    primary.faults = {}
    curation_job_run(job_id=reference_job_create(dataset=working, model="m", endpoint_name="primary").pk, in_flight=1)
    task = review_task_lease(queue=ReviewQueue.REFERENCE, reviewer=reviewer)
    with django_capture_on_commit_callbacks(execute=False) as started:
        reference_review_decide(task=task, reviewer=reviewer, decision="regenerate")
    undo = drafts_cannot_be_saved(monkeypatch)
    started[0]()  # the worker's task, which crashes (the task backend records the exception)
    undo()
    task.refresh_from_db()
    assert task.status == "open"  # back in the queue, not waiting for ever
    [row] = reference_redrafts()["rows"]
    assert (row["item_id"], row["state"], row["error"]) == (task.item_id, "failed", "RuntimeError: database went away")


# ---- the command -------------------------------------------------------------------------------


def run(*args) -> str:
    out = io.StringIO()
    call_command("curation_llm", *args, stdout=out)
    return out.getvalue()


def test_the_command_restarts_a_failed_job_at_another_endpoint(servers, working):
    primary, backup = servers
    primary.faults = {"What is TCP?": ["500"] * ALWAYS}
    with pytest.raises(CommandError) as failed:
        run("references", "--dataset", "work", "--model", "m", "--endpoint", "primary")
    job = CurationJob.objects.get()
    assert f"job {job.pk} failed: 2 done, 1 failed (0 cut off) of 3" in str(failed.value)
    assert "HTTP 500: server exploded after 2 attempts" in str(failed.value)
    assert f"Start it again with --resume {job.pk} (and --endpoint NAME to use another)." in str(failed.value)
    paid = primary.count

    with pytest.raises(CommandError, match=f"Job {job.pk} is a reference drafting job, not translate."):
        run("translate", "--resume", str(job.pk), "--endpoint", "backup")
    out = run("references", "--resume", str(job.pk), "--endpoint", "backup")
    assert f"Job {job.pk} failed before: 1 item(s) sent again, at backup." in out
    assert f"job {job.pk} done: 3 done, 0 failed (0 cut off) of 3" in out
    assert (backup.prompts(), primary.count) == (["What is TCP?"], paid)
    # Nothing left: resuming again sends nothing anywhere.
    assert f"job {job.pk} done: 3 done, 0 failed (0 cut off) of 3" in run("references", "--resume", str(job.pk))
    assert (backup.count, primary.count) == (1, paid)


def test_the_command_names_what_to_do_when_the_endpoint_is_missing(servers, working, monkeypatch):
    _primary, backup = servers
    with pytest.raises(CommandError, match=r"OPENAI_BASE_URL is not set.*\nStart it again with --resume \d+"):
        run("references", "--dataset", "work", "--model", "m")
    job = CurationJob.objects.get()
    with pytest.raises(CommandError, match="Unknown endpoint 'nowhere'"):
        run("references", "--resume", str(job.pk), "--endpoint", "nowhere")
    monkeypatch.setenv("OPENAI_BASE_URL", backup.base_url)
    out = run("references", "--resume", str(job.pk), "--endpoint", "default")
    assert f"Job {job.pk} failed before: 3 item(s) sent again, at the default endpoint." in out
    assert backup.count == 3


def test_an_unfinished_job_goes_on_at_a_named_endpoint_and_a_bad_one_changes_nothing(servers, working):
    primary, backup = servers
    job = reference_job_create(dataset=working, model="m", endpoint_name="primary")
    with pytest.raises(CommandError, match="Unknown endpoint 'nowhere'"):
        run("references", "--resume", str(job.pk), "--endpoint", "nowhere")
    job.refresh_from_db()
    assert (job.endpoint_name, job.status, primary.count, backup.count) == ("primary", "pending", 0, 0)
    out = run("references", "--resume", str(job.pk), "--endpoint", "backup")
    assert f"job {job.pk} done: 3 done, 0 failed (0 cut off) of 3" in out
    assert (CurationJob.objects.get(pk=job.pk).endpoint_name, primary.count, backup.count) == ("backup", 0, 3)


# ---- the page ----------------------------------------------------------------------------------


def test_the_dataset_page_restarts_a_failed_job_at_the_chosen_endpoint(
    servers, working, researcher, client_as, django_capture_on_commit_callbacks
):
    primary, backup = servers
    job = failed_reference_job(primary, working)
    paid = primary.count
    client = client_as(researcher)
    page = client.get(f"/review/datasets/{working.pk}/").text
    assert f'<tr data-job="{job.pk}" data-status="failed">' in page
    assert f'action="/review/datasets/{working.pk}/jobs/{job.pk}/restart/"' in page
    assert '<option value="primary" selected>primary</option>' in page
    assert '<option value="backup">backup</option>' in page

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/review/datasets/{working.pk}/jobs/{job.pk}/restart/", {"endpoint": "backup"}, follow=True
        )
    assert f"Job {job.pk} started again for 1 item, at backup." in response.text
    job.refresh_from_db()
    assert (job.status, job.done, job.endpoint_name) == ("done", 3, "backup")
    assert (backup.prompts(), primary.count) == (["What is TCP?"], paid)
    page = client.get(f"/review/datasets/{working.pk}/").text
    assert f'<tr data-job="{job.pk}" data-status="done">' in page
    assert f"/jobs/{job.pk}/restart/" not in page  # a finished job has nothing to start again

    # Sent twice (a double click, a stale page): the second gets an answer, not a second job.
    response = client.post(f"/review/datasets/{working.pk}/jobs/{job.pk}/restart/", {"endpoint": "backup"}, follow=True)
    assert f"Job {job.pk} is done: only a failed job can be started again." in response.text
    assert backup.count == 1


def test_the_page_in_chinese_and_a_bad_endpoint(servers, working, researcher, client_as):
    primary, backup = servers
    job = failed_reference_job(primary, working)
    client = client_as(researcher)
    client.cookies["django_language"] = "zh-hans"
    page = client.get(f"/review/datasets/{working.pk}/").text
    assert "重新发送失败的条目" in page
    response = client.post(
        f"/review/datasets/{working.pk}/jobs/{job.pk}/restart/", {"endpoint": "nowhere"}, follow=True
    )
    assert "未知端点 &#x27;nowhere&#x27;" in response.text
    assert CurationJob.objects.get(pk=job.pk).status == "failed" and backup.count == 0


def test_only_researchers_restart_and_only_jobs_of_that_dataset(servers, working, reviewer, researcher, client_as):
    primary, _backup = servers
    job = failed_reference_job(primary, working)
    other = DatasetFactory(name="other")
    url = f"/review/datasets/{working.pk}/jobs/{job.pk}/restart/"
    response = client_as(reviewer).post(url, {"endpoint": "backup"})
    assert response.status_code in (302, 403)
    client = client_as(researcher)
    assert client.post(f"/review/datasets/{other.pk}/jobs/{job.pk}/restart/", {"endpoint": "backup"}).status_code == 404
    assert client.get(url).status_code == 405
    assert CurationJob.objects.get(pk=job.pk).status == "failed"


def test_a_resumed_job_is_one_of_the_workspace_named_and_the_command_says_which(servers, working):
    from core.models import Workspace

    primary, _backup = servers
    job = failed_reference_job(primary, working)
    Workspace.objects.create(slug="team-b", name="Team B")
    paid, err = primary.count, io.StringIO()
    # The job is the default workspace's: named from team-b, it is unknown there, and nothing is sent.
    with pytest.raises(CommandError, match=f"^No curation job {job.pk} in workspace team-b.$"):
        call_command("curation_llm", "references", "--resume", str(job.pk), "--workspace", "team-b", stderr=err)
    assert primary.count == paid and CurationJob.objects.get().status == "failed"
    primary.faults = {}
    out = io.StringIO()
    call_command("curation_llm", "references", "--resume", str(job.pk), stdout=out, stderr=err)
    assert err.getvalue() == "Workspace: default.\n" and f"job {job.pk} done: 3 done" in out.getvalue()
