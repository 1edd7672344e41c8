"""A judge run queued while annotators vote: the figures refreshes their votes keep queuing never
keep the run's shards from a worker.

django-tasks-db's worker takes the ready task first by priority, then by `run_after`, then by
when it was queued, and stores a task queued to run at once with a `run_after` of 9999-01-01. A
debounced figures refresh is queued to run a few seconds later, so once due it came before
every task queued to run at once, whenever it was queued: with votes arriving, some refresh was
always due, and a judge run queued beside the crowd judged nothing for minutes. Here the real
worker loop takes one task at a time while an annotator votes before each take and the
debounce window is made to pass (the queued refreshes made due): no clock, only the order in
which the worker took the tasks and the counts."""

import pytest
from django.utils import timezone
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from annotation.campaigns import campaign_create
from annotation.figures import figures_read
from annotation.models import StoredFigures, Vote
from annotation.services import assignment_next, vote_cast
from judging.dispatch import run_enqueue
from judging.models import JudgeRun
from judging.runs.creation import run_create
from judging.runs.spec import RunSpec
from llm.models import Endpoint
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory
from tests.figures import FIGURES_TASKS, run_queued_figures

pytestmark = pytest.mark.django_db(transaction=True)

SHARD_TASK = "judging.tasks.judge_shard_task"
ROWS = (StoredFigures.What.CAMPAIGN, StoredFigures.What.STYLE, StoredFigures.What.RELIABILITY)


def worker_takes_one_task() -> DBTaskResult | None:
    """One turn of `db_worker --queue-name '*'`: django-tasks-db's own loop, taking at most one
    ready task and running it; the task it took (None: nothing was ready)."""
    before = set(DBTaskResult.objects.exclude(status="READY").values_list("pk", flat=True))
    Worker(
        queue_names=["*"],
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=1,
        worker_id="worker-1",
        excluded_queue_names=[],
    ).run()
    return DBTaskResult.objects.exclude(status="READY").exclude(pk__in=before).first()


def debounce_window_passes() -> None:
    """Every queued figures refresh becomes due, as it is once its debounce window has passed."""
    DBTaskResult.objects.filter(task_path__in=FIGURES_TASKS, status="READY").update(
        run_after=timezone.now() - timezone.timedelta(seconds=1)
    )


@pytest.fixture
def crowd_and_run(fake_llm, fast_retries):
    """A campaign with its three stored figures rows computed, an annotator with 40 pairs to vote
    on, and a 40-call judge run (the same questions, one model, 2 shards) on an endpoint of the loopback server, not yet queued."""
    dataset = DatasetFactory(name="crowded")
    models = [CandidateModelFactory(name=name) for name in ("orion-large", "vega-7b")]
    for n in range(40):
        item = ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"question {n}")
        for model in models:
            AnswerFactory(item=item, model=model, text=f"<<{model.name} answers {n}>>")
    annotator = UserFactory(username="annotator0", roles=["annotator"])
    campaign = campaign_create(
        dataset=dataset, candidates=models, question_count=40, slug="crowd", title="Crowd", annotators=[annotator]
    )
    for what in ROWS:
        figures_read(what=what, campaign=campaign, rounds=10)
    run_queued_figures()
    Endpoint.objects.create(name="fake", base_url=fake_llm.base_url, api_key_env="FAKE_LLM_KEY", max_retries=1)
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="judge-m",
            candidates=[models[0]],
            endpoint=Endpoint.objects.get(name="fake"),
            shard_size=20,
            concurrency=4,
        )
    )
    return campaign, annotator, run


def test_a_judge_run_queued_while_votes_keep_queuing_figures_refreshes_is_taken_and_finishes(crowd_and_run, settings):
    settings.FIGURES_DEBOUNCE_SECONDS = 5
    campaign, annotator, run = crowd_and_run

    def vote() -> None:
        assignment = assignment_next(campaign=campaign, annotator=annotator)
        vote_cast(token=assignment.token, annotator=annotator, choice="left")

    # The crowd is voting and refreshes are due before the run is queued.
    vote()
    debounce_window_passes()
    assert DBTaskResult.objects.filter(task_path__in=FIGURES_TASKS, status="READY").count() == len(ROWS)
    votes_when_queued = Vote.objects.filter(campaign=campaign).count()
    queued = run_enqueue(run=run)
    assert queued == 2

    taken = []
    for _ in range(12):
        vote()
        debounce_window_passes()
        pending = DBTaskResult.objects.filter(task_path__in=FIGURES_TASKS, status="READY")
        # Refreshes are coalesced: never more than one waiting per stored row (the campaign's
        # three, and the run's own once it has closed).
        assert pending.count() <= len(ROWS) + 1
        rows = [(path, str(arguments)) for path, arguments in pending.values_list("task_path", "args_kwargs")]
        assert len(rows) == len(set(rows))
        task = worker_takes_one_task()
        assert task is not None and task.status == "SUCCESSFUL", task and task.traceback
        taken.append(task.task_path)

    run.refresh_from_db()
    # The run's first shard task was the first task taken after it was queued, though refreshes
    # queued earlier were due; its worker held the run to the end, and the other shard tasks
    # found their shard taken.
    assert taken[:2] == [SHARD_TASK] * 2, taken
    assert run.status == JudgeRun.Status.FINISHED
    assert run.judgments.scored().count() == run.judgments.count() == 40
    # The refreshes were not starved in turn: the worker went back to them, and each row was
    # refreshed with the votes cast while the run went on.
    assert taken[2:] == [path for path in taken[2:] if path in FIGURES_TASKS] and len(taken[2:]) == 10
    for row in StoredFigures.objects.filter(campaign=campaign):
        assert row.computed_at > run.finished_at and row.inputs["votes"] > votes_when_queued, row.what
