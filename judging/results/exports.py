"""Answer, judgment and leaderboard exports, streamed through the one export writer (core/exports.py)."""

from django.utils.translation import gettext as _

from core.exports import EXPORT_CHUNK, ExportError, ExportTable, exporter
from judging.answers.versions import run_answers
from judging.models import Answer, JudgeRun, Judgment
from judging.runs.manifest import run_manifest

ANSWER_FIELDS = [
    "dataset",
    "external_id",
    "model",
    "response",
    "origin",
    "prompt_tokens",
    "completion_tokens",
    "latency_ms",
    "created_at",
    # True for a generated reply the endpoint stopped at max_tokens: an incomplete answer.
    "cut_off",
]
JUDGMENT_FIELDS = [
    "run",
    "dataset",
    "question_id",
    "language",
    "intent",
    "category",
    "model",
    "order",
    "template",
    "template_version",
    "final_score",
    "outcome",
    "scores",
    "parse_error",
    "call_error",
    "flags",
    "raw_text",
    "prompt_tokens",
    "completion_tokens",
    "latency_ms",
    "cached",
    "created_at",
]
LEADERBOARD_FIELDS = [
    "run",
    "group",
    "column",
    "model",
    "mean",
    "low",
    "high",
    "count",
    "failures",
    "rank",
    "rank_meaningful",
    "note",
    "items",
    "decisive",
    "win_rate",
    "win_rate_se",
    "lose_rate",
    "tie_rate",
    "error_rate",
    "length",
    "reference",
    "lc_win_rate",
    "lc_low",
    "lc_high",
]


# The leaderboard's rates (pairwise), written with 6 decimal places.
LEADERBOARD_RATES = [
    "win_rate",
    "win_rate_se",
    "lose_rate",
    "tie_rate",
    "error_rate",
    "lc_win_rate",
    "lc_low",
    "lc_high",
]


def _runs(*, dataset=None, study=None, run=None, workspaces: set[int] | None = None):
    runs = JudgeRun.objects.select_related("dataset", "reference_model").order_by("pk")
    if workspaces is not None:
        runs = runs.filter(workspace_id__in=workspaces)
    if run is not None:
        return runs.filter(pk=run.pk)
    # Across runs, archived ones are left out (one is still exported when asked for by its id).
    runs = runs.active()
    if dataset is not None:
        runs = runs.filter(dataset=dataset)
    if study is not None:
        runs = runs.filter(dataset__study=study)
    return runs


def _of_study_data(*, dataset=None, study=None, run=None) -> bool:
    """Whether the scope holds a study's dataset: its judgments quote participants' questions and
    its answers reply to them, so each export of them is audited like the items themselves. No
    scope exports every run, which is study data as soon as one run is on a study's dataset."""
    if study is not None:
        return True
    if run is not None:
        return run.dataset.study_id is not None
    if dataset is not None:
        return dataset.study_id is not None
    return JudgeRun.objects.filter(dataset__study__isnull=False).exists()


@exporter("judgments", personal=_of_study_data, across=True, question_text=True)
def judgments_export(
    *, dataset=None, study=None, run=None, workspaces: set[int] | None = None, question_text: bool = False
) -> ExportTable:
    """Every judgment of the run (or of the dataset's / study's runs) with its raw reply, in id
    order; with `question_text`, the item's question last."""
    judgments = Judgment.objects.filter(
        run__in=_runs(dataset=dataset, study=study, run=run, workspaces=workspaces).values("pk")
    )
    keys = [
        "run_id",
        "run__dataset__name",
        "item__external_id",
        "item__language",
        "item__intent",
        "item__category",
        "model__name",
        "order",
        "template__name",
        "template__version",
        "final_score",
        "outcome",
        "scores",
        "parse_error",
        "call_error",
        "flags",
        "reply_text",
        "prompt_tokens",
        "completion_tokens",
        "latency_ms",
        "cached",
        "created_at",
    ]
    fields = JUDGMENT_FIELDS + (["question_text"] if question_text else [])
    keys += ["item__question"] if question_text else []
    rows = judgments.with_reply_text().order_by("pk").values_list(*keys).iterator(chunk_size=EXPORT_CHUNK)
    return ExportTable(fields=fields, rows=(dict(zip(fields, row)) for row in rows))


@exporter("leaderboard", across=True)
def leaderboard_export(*, dataset=None, study=None, run=None, workspaces: set[int] | None = None) -> ExportTable:
    """The leaderboard rows of the run (or of every run of the dataset / study), one run at a
    time: the stored figures when they match the run's judgments, else computed (and stored) now."""

    # Imported here: the statistics (numpy and the rest) load only for an export that needs them,
    # not in every process that registers the exporters (each command and worker at start-up).
    from judging.results.figures import run_figures_read

    def rows():
        for judge_run in _runs(dataset=dataset, study=study, run=run, workspaces=workspaces).iterator():
            payload, _figures = run_figures_read(run=judge_run, compute="stale")
            yield from (payload or {}).get("rows", [])

    return ExportTable(fields=LEADERBOARD_FIELDS, rows=rows(), probabilities=LEADERBOARD_RATES)


@exporter("answers", personal=_of_study_data, question_text=True)
def answers_export(*, dataset=None, study=None, run=None, question_text: bool = False) -> ExportTable:
    """Every candidate answer of the dataset, by item and model; with `question_text`, the
    item's question last."""
    if dataset is None and run is None:
        raise ExportError(_("The answers export needs a dataset."))
    dataset = dataset if dataset is not None else run.dataset
    # A run's answers are the versions it judged; a dataset's, each model's current version.
    values = (
        (run_answers(run) if run is not None else Answer.objects.filter(item__dataset=dataset))
        .order_by("item_id", "model__name")
        .values(
            "item__external_id",
            "model__name",
            "text",
            "origin",
            "prompt_tokens",
            "completion_tokens",
            "latency_ms",
            "created_at",
            "cut_off",
            *(["item__question"] if question_text else []),
        )
    )

    def rows():
        for row in values.iterator(chunk_size=EXPORT_CHUNK):
            question = row.pop("item__question", None)
            yield {
                "dataset": dataset.name,
                "external_id": row.pop("item__external_id"),
                "model": row.pop("model__name"),
                "response": row.pop("text"),
                **row,
                **({"question_text": question} if question_text else {}),
            }

    return ExportTable(fields=ANSWER_FIELDS + (["question_text"] if question_text else []), rows=rows())


MANIFEST_FIELDS = ["run", "dataset", "manifest"]


@exporter("manifests", across=True)
def manifests_export(*, dataset=None, study=None, run=None, workspaces: set[int] | None = None) -> ExportTable:
    """The manifest of the run (or of every run of the dataset / study), one run per row; in JSONL
    each manifest is a JSON object, in CSV a JSON text."""

    def rows():
        for judge_run in _runs(dataset=dataset, study=study, run=run, workspaces=workspaces).iterator():
            yield {"run": judge_run.pk, "dataset": judge_run.dataset.name, "manifest": run_manifest(run=judge_run)}

    return ExportTable(fields=MANIFEST_FIELDS, rows=rows())
