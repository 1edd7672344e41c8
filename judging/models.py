"""Candidate models and their answers, judge templates, runs and judgments."""

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.db.models import Q, Value
from django.db.models.functions import Coalesce, NullIf
from django.utils.translation import gettext_lazy as _

from core.archiving import Archivable
from core.models import default_workspace_id
from core.uploads import BackgroundUpload
from curation.choices import Language
from curation.models import Dataset, Item

# Defined apart to keep each file readable, and part of this app's models like the rest.
from judging.answer_models import (  # noqa: F401
    Answer,
    AnswerSet,
    CandidateModel,
    answer_set_current_or_new,
)
from llm.models import Endpoint


class JudgeMode(models.TextChoices):
    POINTWISE = "pointwise", _("Pointwise (reference-anchored scores)")
    PAIRWISE = "pairwise", _("Pairwise (win rate against a reference model)")


class JudgeTemplate(models.Model):
    """A versioned judge prompt. Editing makes a new version; runs keep the one they used.

    A template with no workspace is a built-in one, shipped by Userbench (migrations and
    `templates_ensure_defaults`): read-only for everyone, copied into a workspace to be changed.
    Any other belongs to its workspace: only that workspace's researchers see, edit and judge with
    it, and a name may be used once per workspace (a copy of a built-in keeps its name)."""

    workspace = models.ForeignKey(
        "core.Workspace", null=True, blank=True, on_delete=models.PROTECT, related_name="judge_templates"
    )
    name = models.CharField(max_length=100)
    version = models.PositiveIntegerField(default=1)
    mode = models.CharField(max_length=16, choices=JudgeMode.choices)
    language = models.CharField(max_length=8, choices=Language.choices)
    text = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "name", "version"], name="template_version_unique"),
            # A null workspace is not equal to another in a unique constraint: built-ins need their own.
            models.UniqueConstraint(
                fields=["name", "version"], condition=Q(workspace__isnull=True), name="builtin_template_version_unique"
            ),
        ]

    def __str__(self):
        return f"{self.name} v{self.version}"


class JudgeRun(Archivable):
    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        RUNNING = "running", _("Running")
        FINISHED = "finished", _("Finished")
        CANCELLED = "cancelled", _("Cancelled")
        FAILED = "failed", _("Failed")

    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="judge_runs")
    # The workspace it belongs to (core/workspaces.py): its dataset's, set when it is made.
    workspace = models.ForeignKey(
        "core.Workspace", on_delete=models.PROTECT, related_name="+", default=default_workspace_id, blank=True
    )
    mode = models.CharField(max_length=16, choices=JudgeMode.choices)
    judge_model = models.CharField(max_length=128)
    endpoint = models.ForeignKey(Endpoint, null=True, blank=True, on_delete=models.PROTECT, related_name="runs")
    candidates = models.ManyToManyField(CandidateModel, related_name="judge_runs")
    reference_model = models.ForeignKey(
        CandidateModel, null=True, blank=True, on_delete=models.PROTECT, related_name="reference_in_runs"
    )
    both_orders = models.BooleanField(default=False)
    seed = models.BigIntegerField(default=0)
    # The exact template versions chosen when the run was created (one per intent/type/language).
    templates = models.ManyToManyField(JudgeTemplate, blank=True, related_name="runs")
    # The answer versions it judges (one per candidate, reference and probe), pinned when it is made.
    answer_sets = models.ManyToManyField(AnswerSet, blank=True, related_name="runs")
    # Calls in flight across all workers: a stated limit, or with `concurrency_auto` the bound
    # under which each worker's window finds the server's capacity by itself.
    concurrency = models.PositiveSmallIntegerField(default=16)
    concurrency_auto = models.BooleanField(default=False)
    # Seconds from sending a call to its reply; blank: the endpoint's.
    timeout_seconds = models.FloatField(null=True, blank=True)
    # Sent with every judge call; None sends none, so the server's default applies (how the URS
    # code called its judges).
    temperature = models.FloatField(null=True, blank=True, default=0.0)
    max_tokens = models.PositiveIntegerField(null=True, blank=True)
    # Sent as a system message before each judge prompt when set (ChineseAlpacaEval's judge had one).
    system_prompt = models.TextField(blank=True)
    total = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # Why the run stopped or failed, in words a researcher can act on.
    error = models.CharField(max_length=500, blank=True)
    # When the run's watchdog (judging.engine.watchdog.run_watch) looks next for shards whose worker died.
    watchdog_at = models.DateTimeField(null=True, blank=True)
    # Running counts, kept by the workers as they save judgments (recounted when the run closes
    # or resumes), so progress is read from one row however many judgments there are.
    replied = models.PositiveIntegerField(default=0)
    parse_failures = models.PositiveIntegerField(default=0)
    call_failures = models.PositiveIntegerField(default=0)
    cut_off = models.PositiveIntegerField(default=0)
    cached_replies = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The judge's provider and family, compared with the candidates' for self-preference.
    judge_provider = models.CharField(max_length=64, blank=True)
    judge_family = models.CharField(max_length=64, blank=True)
    # What the run was made from, recorded at creation (judging/runs/manifest.py): enough to make
    # it again with `rerun` and to tell what changed when two runs disagree.
    manifest = models.JSONField(default=dict, blank=True)
    # Constant adversarial answers judged beside the candidates, reported apart, never ranked.
    injection_probe = models.BooleanField(default=False)
    # Calls skip the response cache: a re-run that measures the judge's drift must ask again.
    fresh_calls = models.BooleanField(default=False)
    # Calls go through the provider's Batch API (judging/engine/batch.py): about half the price,
    # replies within 24 hours; its batches are BatchJob rows.
    batch = models.BooleanField(default=False)
    # When the next look at its batches is due (one chain of poll tasks at a time).
    batch_poll_at = models.DateTimeField(null=True, blank=True)
    rerun_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reruns")
    # A run starts once per key: "page:<the preview's one-time token>" or "api:<Idempotency-Key>",
    # unique per person; a second start with the key shows this run. `start_request` is what the
    # API was asked (a same key with other values is refused, naming them).
    start_key = models.CharField(max_length=220, blank=True)
    start_request = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["created_by", "start_key"], condition=~Q(start_key=""), name="run_starts_once_per_key"
            ),
            models.CheckConstraint(
                condition=Q(mode="pointwise") | Q(reference_model__isnull=False),
                name="pairwise_run_has_reference_model",
            ),
            models.CheckConstraint(condition=Q(concurrency__gte=1), name="run_concurrency_positive"),
            models.CheckConstraint(
                condition=Q(temperature__isnull=True) | Q(temperature__gte=0, temperature__lte=2),
                name="run_temperature_in_range",
            ),
        ]

    def __str__(self):
        return f"run {self.pk} ({self.mode}, {self.judge_model})"


# What a judgment is, written once. A failed call has no reply. A reply cut off by max_tokens
# ("length", as the server said) is kept with a parse error but is no parse failure: sending it
# again with a larger limit may score it. Every other reply with a parse error is a parse failure.
REPLIED = Q(call_error="")
CALL_FAILURE = ~Q(call_error="")
CUT_OFF = REPLIED & Q(finish_reason="length")
PARSE_FAILURE = REPLIED & ~Q(parse_error="") & ~Q(finish_reason="length")
SCORED = REPLIED & Q(parse_error="") & ~Q(finish_reason="length")


class JudgmentQuerySet(models.QuerySet):
    """Judgments by what became of their call; the run's running counts use the same filters."""

    def replied(self):
        """A reply came back, parsed or not (failed calls left out)."""
        return self.filter(REPLIED)

    def call_failures(self):
        """Calls that failed after their retries: no reply; `judge_resume` sends them again."""
        return self.filter(CALL_FAILURE)

    def cut_off(self):
        """Replies cut off by max_tokens: kept, never scored."""
        return self.filter(CUT_OFF)

    def parse_failures(self):
        """Replies in full that the parser could not read as a verdict."""
        return self.filter(PARSE_FAILURE)

    def scored(self):
        """Replies read as a verdict."""
        return self.filter(SCORED)

    def unscored(self):
        """Every judgment without a verdict: failed calls, cut-off replies and parse failures."""
        return self.exclude(SCORED)

    def with_reply_text(self):
        """Each judgment's reply as `reply_text`, wherever it is stored: its own copy, else the
        response cache row it refers to (Judgment.reply for one judgment)."""
        return self.annotate(
            reply_text=Coalesce(
                NullIf("raw_text", Value("")), "response__text", Value(""), output_field=models.TextField()
            )
        )


class Judgment(models.Model):
    """One judge call's outcome. A parse failure keeps its raw text and reason."""

    class Outcome(models.TextChoices):
        WIN = "win", _("Win")
        LOSE = "lose", _("Lose")
        TIE = "tie", _("Tie")
        ERROR = "error", _("Error")

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="judgments")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="judgments")
    model = models.ForeignKey(CandidateModel, on_delete=models.PROTECT, related_name="judgments")
    # 0: the candidate is shown first (pairwise) or the only order (pointwise); 1: swapped.
    order = models.PositiveSmallIntegerField(default=0)
    template = models.ForeignKey(JudgeTemplate, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    # The version of the candidate's answers it judged (one of the run's `answer_sets`).
    answer_set = models.ForeignKey(AnswerSet, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    # A reply is stored once: in the response cache row it came from (`response`), which the
    # judgment refers to. `raw_text` holds it only when no cache row holds this very text (a
    # re-run that asked again a prompt the cache had answered otherwise), and for judgments
    # saved before replies were stored once. Read it as `reply`.
    raw_text = models.TextField(blank=True)
    response = models.ForeignKey(
        "llm.LLMResponse",
        to_field="key",
        db_column="response_key",
        null=True,
        blank=True,
        # A withdrawn participant's replies leave the cache (core.erasure): the judgment keeps
        # its scores and loses the text.
        on_delete=models.SET_NULL,
        related_name="+",
    )
    scores = models.JSONField(default=dict, blank=True)
    final_score = models.PositiveSmallIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=8, choices=Outcome.choices, blank=True)
    parse_error = models.CharField(max_length=300, blank=True)
    # A call that failed after its retries: no reply to parse; `judge_resume` tries it again.
    call_error = models.CharField(max_length=300, blank=True)
    # "failed", "fatal" (every call met it: a key, a model, a URL), or "context_length" (the
    # prompt does not fit: sent again only once `error_endpoint` no longer matches).
    call_error_kind = models.CharField(max_length=16, blank=True)
    error_endpoint = models.CharField(max_length=16, blank=True)
    # As the server said: "length" means cut off by max_tokens (kept, never scored).
    finish_reason = models.CharField(max_length=32, blank=True)
    # Warnings about the judged text, e.g. an answer that carries judge-format strings.
    flags = models.JSONField(default=list, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    cached = models.BooleanField(default=False)
    # The model name the endpoint put in its reply (a gateway may serve another than asked for).
    reported_model = models.CharField(max_length=128, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = JudgmentQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["run", "created_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "item", "model", "order"], name="one_judgment_per_run_item_model_order"
            ),
            models.CheckConstraint(
                condition=Q(final_score__isnull=True) | Q(final_score__gte=1, final_score__lte=10),
                name="final_score_in_range",
            ),
        ]

    def __str__(self):
        return f"{self.run_id}/{self.item_id}/{self.model_id}/{self.order}"

    @property
    def reply(self) -> str:
        """The judge's reply as it came back: the cache row's text, or the judgment's own copy
        (select_related("response") where many are read)."""
        if self.raw_text or self.response_id is None:
            return self.raw_text
        return self.response.text if self.response is not None else ""


def stale_after() -> timedelta:
    """How old a shard's or a worker's heartbeat may be before its worker counts as gone."""
    return timedelta(seconds=float(settings.JUDGING_STALE_SECONDS))


class JudgeShard(models.Model):
    """A slice of a run executed as one task on the `judging` queue.

    django-tasks-db has no retries and no dead-worker recovery, so the shard row carries
    what it lacks: status, attempts, the worker holding it and a heartbeat. A RUNNING shard
    whose heartbeat is stale was left by a crash; `judge_resume` queues it again.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")
        CANCELLED = "cancelled", _("Cancelled")

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="shards")
    index = models.PositiveIntegerField()
    # Work units as [item_id, model_id, order] triples; what is missing is what is left.
    units = models.JSONField(default=list)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveIntegerField(default=0)
    worker_id = models.CharField(max_length=100, blank=True)
    task_id = models.CharField(max_length=64, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    in_flight = models.PositiveIntegerField(default=0)
    error = models.CharField(max_length=300, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="shard_index_unique_per_run")]

    def __str__(self):
        return f"run {self.run_id} shard {self.index}"


class RunWorker(models.Model):
    """A worker holding shards of a run: its share of the run's concurrency, its window now,
    and how fast it saves judgments. Written at every tick; a row silent for
    JUDGING_STALE_SECONDS belongs to a worker that is gone."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="workers")
    worker_id = models.CharField(max_length=100)
    ceiling = models.PositiveIntegerField(default=0)
    window = models.PositiveIntegerField(default=0)
    in_flight = models.PositiveIntegerField(default=0)
    overloads = models.PositiveIntegerField(default=0)
    rate = models.FloatField(default=0.0)
    heartbeat_at = models.DateTimeField()
    started_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "worker_id"], name="one_row_per_run_worker")]

    def __str__(self):
        return f"run {self.run_id} on {self.worker_id}"


class RunFigures(models.Model):
    """A run's leaderboard (and its dataset's cross-validation) as the pages, API and exports
    show it: computed by a background task when judgments change, stored with the inputs it
    came from, so a page answers at once and says whether newer judgments are waiting."""

    run = models.OneToOneField(JudgeRun, on_delete=models.CASCADE, related_name="figures")
    payload = models.JSONField(default=dict)
    # What the figures were computed from: judgment count and newest id, run status.
    inputs = models.JSONField(default=dict)
    computed_at = models.DateTimeField(null=True, blank=True)
    refresh_queued_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"figures of run {self.run_id}"


class AnswerGeneration(models.Model):
    """One request to generate a candidate model's answers to a dataset from the browser or the
    API, run by a worker on the `judging` queue (judging/answers/generation_jobs.py).

    The answers themselves are the state: a generation only asks for the items its model has not
    answered, so cancelling keeps what came back and resuming sends the rest. The counts are
    those of the latest attempt, written as its batches are saved.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        FINISHED = "finished", _("Finished")
        CANCELLED = "cancelled", _("Cancelled")
        FAILED = "failed", _("Failed")

    ACTIVE = (Status.QUEUED, Status.RUNNING)

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="answer_generations")
    model = models.ForeignKey(CandidateModel, on_delete=models.PROTECT, related_name="generations")
    # Null: the default endpoint from the environment.
    endpoint = models.ForeignKey(
        Endpoint, null=True, blank=True, on_delete=models.PROTECT, related_name="answer_generations"
    )
    # A benchmark's way of asking (judging.answers.generation.GENERATION_PRESETS); blank: none.
    preset = models.CharField(max_length=32, blank=True)
    max_tokens = models.PositiveIntegerField(null=True, blank=True)
    # Asked through the provider's Batch API (judging/answers/generation_batch.py), not live.
    batch = models.BooleanField(default=False)
    batch_poll_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    cancel_requested = models.BooleanField(default=False)
    total = models.PositiveIntegerField(default=0)
    generated = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    cut_off = models.PositiveIntegerField(default=0)
    # Why it stopped or what failed, in words a researcher can act on.
    error = models.CharField(max_length=2000, blank=True)
    task_id = models.CharField(max_length=64, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # The worker's last sign of life while running: a generation silent for JUDGING_STALE_SECONDS
    # lost its worker and may be resumed.
    beat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # Two generations of one model on one dataset would ask for the same items twice.
            models.UniqueConstraint(
                fields=["dataset", "model"],
                condition=Q(status__in=["queued", "running"]),
                name="one_active_generation_per_dataset_and_model",
            ),
        ]

    def __str__(self):
        return f"generation {self.pk} ({self.model_id} on {self.dataset_id})"


class BatchJob(models.Model):
    """One batch at the provider's Batch API, for a judge run or a generation (judging/batching.py).

    Written step by step, each step committed before the next is sent, so that a crash, a
    restart or a resume picks the batch up where it was and never pays twice: the row and the
    units it holds first (PREPARING), then the uploaded file's id (UPLOADED), then the batch's
    id (SUBMITTED); a stored file id is never uploaded again and a stored batch id never created
    again. Once the batch ends, its replies are saved with the row marked COLLECTED, in one
    transaction."""

    class Status(models.TextChoices):
        PREPARING = "preparing", _("Preparing")
        UPLOADED = "uploaded", _("Uploaded")
        SUBMITTED = "submitted", _("At the provider")
        COLLECTED = "collected", _("Collected")
        # Collected, and what it left without a result handed back by a resume (a generation's).
        SETTLED = "settled", _("Settled")

    OPEN = (Status.PREPARING, Status.UPLOADED, Status.SUBMITTED)

    run = models.ForeignKey(JudgeRun, null=True, blank=True, on_delete=models.CASCADE, related_name="batch_jobs")
    generation = models.ForeignKey(
        AnswerGeneration, null=True, blank=True, on_delete=models.CASCADE, related_name="batch_jobs"
    )
    # The provider it was sent to (its base URL, as judging.batching.provider_url writes it):
    # batch ids are the provider's, unique at one provider, not across them.
    endpoint_url = models.CharField(max_length=400, blank=True, default="")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PREPARING)
    # The units it holds, as custom ids ("<item>:<model>:<order>" of a run, "<item>" of a
    # generation); a result line whose custom id is not here is ignored.
    custom_ids = models.JSONField(default=list)
    requests = models.PositiveIntegerField(default=0)
    bytes = models.PositiveBigIntegerField(default=0)
    input_file_id = models.CharField(max_length=200, blank=True)
    batch_id = models.CharField(max_length=200, null=True, blank=True)
    output_file_id = models.CharField(max_length=200, blank=True)
    error_file_id = models.CharField(max_length=200, blank=True)
    # As the provider says: validating, in_progress, finalizing, completed, failed, expired,
    # cancelling, cancelled.
    provider_status = models.CharField(max_length=32, blank=True)
    completed = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    # Usage of the replies collected, priced at the endpoint's batch price.
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    # Result lines that named a request of the batch a second time (the first one counts), and
    # lines that named none of its requests (another batch's, none, or not JSON): ignored, counted.
    duplicate_lines = models.PositiveIntegerField(default=0)
    unknown_lines = models.PositiveIntegerField(default=0)
    error = models.CharField(max_length=500, blank=True)
    cancel_sent = models.BooleanField(default=False)
    # Who works on the row now (a process, as judging/engine/workers.py names them), until when.
    holder = models.CharField(max_length=100, blank=True)
    held_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(run__isnull=False) & Q(generation__isnull=True))
                | (Q(run__isnull=True) & Q(generation__isnull=False)),
                name="batch_job_has_one_owner",
            ),
            models.UniqueConstraint(
                fields=["endpoint_url", "batch_id"],
                condition=Q(batch_id__isnull=False),
                name="batch_job_batch_id_unique_per_endpoint",
            ),
        ]

    def __str__(self):
        return f"batch job {self.pk} ({self.batch_id or self.status})"


class AnswerUpload(BackgroundUpload):
    """An answers file larger than UPLOAD_BACKGROUND_BYTES, kept in the database until a worker on
    the `default` queue has read and stored it (judging/answers/uploads.py, with core/uploads.py),
    so that no web worker reads it in a request and any worker host can. The file is emptied once
    the upload finishes or is refused; an upload whose worker died keeps it to be resumed or
    discarded. The answers and the finished status are written in one transaction: never half an
    upload."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="answer_uploads")
    model_name = models.CharField(max_length=128)
    file_format = models.CharField(max_length=8, default="jsonl")
    # The model's next version of answers (judging/answers/versions.py), not more of the current one.
    replace = models.BooleanField(default=False)

    class Meta(BackgroundUpload.Meta):
        pass

    def __str__(self):
        return f"answers upload {self.pk} ({self.model_name} on {self.dataset_id})"
