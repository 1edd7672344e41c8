"""`reproduce`: one paper's method end to end, with a manifest of everything it used.

The steps are the services every other command uses: the public items become a frozen dataset
(`dataset_import`, once per file content and slice), published answers are imported
(`answers_import`) and missing ones generated with the benchmark's preset (`answers_generate`),
the run is made with the paper's templates as Userbench ships them and the authors' judge
parameters (`run_create`), and the command executes it in its own process like `judge --inline`.
The table comes from the run's leaderboard in the paper's layout (judging/papers/tables.py).
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone

from core import __version__
from core.errors import UserbenchError
from core.models import Workspace
from core.workspaces import named_one, workspace_for_command
from curation.datasets.importers import dataset_import
from curation.datasets.selectors import DatasetNotFound, dataset_by_name
from curation.models import Dataset
from judging.answers.generation import GenerationError, answers_generate
from judging.answers.generation_batch import generation_batch_wait
from judging.answers.generation_jobs import generation_batch_open
from judging.answers.imports import answers_import
from judging.errors import RunError
from judging.models import Answer, JudgeRun
from judging.papers.benchmarks import BENCHMARKS, Benchmark, locate, published_answers, published_matches, spread
from judging.prompts.templates import templates_as_published
from judging.results.boards import run_leaderboard
from judging.runs.creation import run_create, run_spec_by_names
from judging.runs.manifest import dataset_content_hash, run_manifest, text_hash
from llm.errors import EndpointError
from llm.selectors import endpoint_by_name, endpoint_config

FORMAT = "userbench-reproduce-manifest/1"
CHUNK = 1 << 20


class ReproduceError(UserbenchError):
    """A reproduction that cannot run as asked; the message says what to give or fix."""


def benchmark_get(name: str) -> Benchmark:
    if name not in BENCHMARKS:
        raise ReproduceError(f"Unknown benchmark {name!r}; choose among {', '.join(BENCHMARKS)}.")
    return BENCHMARKS[name]


def file_entry(path: Path, root: Path | None, role: str) -> dict:
    """A data file as the manifest records it: where (relative to the data folder), its size and sha256."""
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as stream:
        while chunk := stream.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
    shown = path.relative_to(root).as_posix() if root is not None and path.is_relative_to(root) else str(path)
    return {"role": role, "path": shown, "bytes": size, "sha256": digest.hexdigest()}


def source_commit() -> dict:
    """The git commit Userbench runs from, and whether its files differ from it (None outside a clone)."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(settings.BASE_DIR), *args], capture_output=True, text=True, timeout=10, check=True
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip()

    commit = git("rev-parse", "HEAD")
    changes = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"commit": commit, "modified": bool(changes) if changes is not None else None}


def reproduction_dataset(
    *,
    benchmark: Benchmark,
    data_dir: Path | None,
    dataset_name: str | None = None,
    limit: int | None = None,
    workspace: Workspace | None = None,
) -> tuple[Dataset, list[dict], bool]:
    """The dataset to judge, the data files it came from, and whether it was imported now.

    `dataset_name` takes a dataset already in Userbench. Otherwise the benchmark's item file is
    read from `data_dir` and imported once per content (its sha256 names the dataset) and slice:
    `limit` keeps that many items spread over the paper's groups (intents or categories).
    `workspace` (`--workspace`): where a new import goes, and where a dataset taken must be (the
    run stays in its dataset's workspace); None: a new import needs it once there are several."""
    if limit is not None and limit < 1:
        raise ReproduceError("--limit must be at least 1.")
    if dataset_name:
        if limit:
            raise ReproduceError("--limit slices the items of --data; a dataset given with --dataset is judged whole.")
        try:
            dataset = dataset_by_name(name=dataset_name, workspace_id=workspace.pk if workspace else None)
        except DatasetNotFound as error:
            raise ReproduceError(str(error)) from None
        if benchmark.summary is not None and dataset.source != benchmark.format.source:
            # Its table is computed only on its own datasets.
            raise ReproduceError(
                f"Dataset {dataset_name!r} is not an {benchmark.format.source_label} dataset (its source is "
                f"{dataset.source})."
            )
        return dataset, [], False
    if data_dir is None:
        raise ReproduceError(
            f"Give --data DIR: the folder holding the benchmark's public files ({benchmark.data_from})."
        )
    if not data_dir.is_dir():
        raise ReproduceError(f"--data {data_dir} is not a folder.")
    path = locate(data_dir, benchmark.items)
    if path is None:
        raise ReproduceError(
            f"{data_dir} holds no {' or '.join(benchmark.items)}: give the folder of {benchmark.data_from}."
        )
    entry = file_entry(path, data_dir, "items")
    name = f"{benchmark.name}-{entry['sha256'][:12]}" + (f"-{limit}-items" if limit else "")
    # Imported before: in the workspace named, else in the one workspace that holds the name.
    existing = named_one(Dataset.objects.all(), workspace_id=workspace.pk if workspace else None, name=name)
    if existing is not None:
        return existing, [entry], False
    # Where the new dataset goes: named, or the only workspace there is.
    workspace = workspace or workspace_for_command(None, required=True)
    select = None
    if limit:

        def select(records):
            return spread(records, key=lambda record: getattr(record, benchmark.group), limit=limit)

    description = f"{benchmark.paper}: {path.name}, sha256 {entry['sha256']}" + (
        f"; {limit} items spread over its {benchmark.group} values" if limit else ""
    )
    with path.open("rb") as stream:
        dataset = dataset_import(
            fmt=benchmark.format.name,
            stream=stream,
            name=name,
            description=description,
            select=select,
            workspace=workspace,
        )
    return dataset, [entry], True


def reproduction_endpoint_check(*, endpoint_name: str | None, workspace: Workspace | None) -> None:
    """With `--workspace`, a named endpoint must be one of that workspace's: its limits and its key
    belong to that team. ReproduceError otherwise, before anything is sent."""
    if workspace is None or not endpoint_name or endpoint_name == "default":
        return
    try:
        endpoint_by_name(name=endpoint_name, workspace_id=workspace.pk)
    except EndpointError as error:
        raise ReproduceError(f"Workspace {workspace.slug!r}: {error}") from None


def published_checks(*, benchmark: Benchmark, data_dir: Path | None) -> list[dict]:
    """Each configuration file the benchmark publishes, compared with the copy Userbench uses."""
    checks: list[dict[str, Any]] = []
    for config in benchmark.published:
        path = locate(data_dir, config.paths) if data_dir is not None else None
        if path is None:
            checks.append({"what": config.what, "path": None, "sha256": None, "matches": None})
            continue
        checks.append(
            {"what": config.what, **file_entry(path, data_dir, "published"), "matches": published_matches(path, config)}
        )
    return checks


def reproduction_answers(
    *,
    benchmark: Benchmark,
    dataset: Dataset,
    data_dir: Path | None,
    models: list[str],
    endpoint_name: str | None,
    concurrency: int | str | None = None,
    on_progress: Callable[[str, dict], None] | None = None,
    batch: bool = False,
) -> list[dict]:
    """Answers for every model on every item: those already there, then the benchmark's published
    answers (imported once), then the rest generated with the benchmark's preset (with `batch`,
    through the endpoint's Batch API, waited for here; Ctrl-C leaves its batches at the provider
    and the same command picks them up).

    Returns one entry per model: how many answers were there, imported (and from which file),
    generated, failed and cut off at max_tokens (kept, marked, and asked for again next time:
    "cut_off", "cut_off_at"). `on_progress(model, counts)` follows generation, with counts
    {"generated", "failed", "cut_off", "cut_off_at", "total"}."""
    total = dataset.items.count()
    entries = []
    for name in models:
        # Complete answers only: a cut-off one is asked for again.
        had = Answer.objects.filter(item__dataset=dataset, model__name=name, cut_off=False).count()
        entry: dict[str, Any] = {
            "model": name,
            "already": had,
            "imported": 0,
            "imported_from": None,
            "generated": 0,
            "failed": 0,
            "cut_off": 0,
            "cut_off_at": None,
        }
        path = published_answers(data_dir, benchmark, name) if data_dir is not None else None
        if had == 0 and path is not None:
            with path.open("rb") as stream:
                entry["imported"] = answers_import(
                    dataset_name=dataset.name,
                    workspace_id=dataset.workspace_id,
                    model_name=name,
                    stream=stream,
                    only_known=True,
                )
            entry["imported_from"] = file_entry(path, data_dir, f"answers of {name}")
        if had + entry["imported"] < total and batch:
            entry.update(_generate_batched(benchmark, dataset, name, endpoint_name, on_progress))
        elif had + entry["imported"] < total:
            counts = answers_generate(
                dataset=dataset,
                model_name=name,
                # The dataset's workspace's endpoint of that name (or the shared default).
                endpoint=endpoint_config(endpoint_name, workspace_id=dataset.workspace_id),
                concurrency=concurrency,
                preset=benchmark.generation_preset.name,
                # mypy cannot infer a lambda whose default binds the loop's model name.
                on_progress=(lambda counts, name=name: on_progress(name, counts))  # type: ignore[misc]
                if on_progress
                else None,
            )
            entry.update(
                generated=counts["generated"],
                failed=counts["failed"],
                cut_off=counts["cut_off"],
                cut_off_at=counts["cut_off_at"],
                errors=counts["errors"][:5],
            )
        entries.append(entry)
    return entries


def _generate_batched(benchmark: Benchmark, dataset: Dataset, name: str, endpoint_name: str | None, on_progress):
    """A model's missing answers through the Batch API, waited for here."""
    try:
        endpoint = (
            endpoint_by_name(name=endpoint_name, workspace_id=dataset.workspace_id)
            if endpoint_name not in (None, "", "default")
            else None
        )
        generation, _made = generation_batch_open(
            dataset=dataset, model_name=name, endpoint=endpoint, preset=benchmark.generation_preset.name
        )
    except (EndpointError, GenerationError) as error:
        raise ReproduceError(str(error)) from None

    def show():
        generation.refresh_from_db()
        if on_progress is not None:
            on_progress(name, _batch_counts(generation))

    if generation_batch_wait(generation=generation, on_progress=show) == "interrupted":
        raise ReproduceError(
            f"Stopped waiting for {name}'s answers: the batches stay at the provider and are never uploaded again. "
            "Run the same command to continue."
        )
    generation.refresh_from_db()
    return {**_batch_counts(generation), "errors": generation.error.splitlines()[:5], "batch": True}


def _batch_counts(generation) -> dict:
    return {
        "generated": generation.generated,
        "failed": generation.failed,
        "cut_off": generation.cut_off,
        "cut_off_at": generation.max_tokens,
        "total": generation.total,
    }


def reproduction_run(
    *,
    benchmark: Benchmark,
    dataset: Dataset,
    judge_model: str,
    models: list[str],
    reference_model: str | None,
    endpoint_name: str | None,
    concurrency: int | str | None,
    template_set: str | None = None,
    seed: int = 0,
    exclude_missing_references: bool = False,
    include_cut_off: bool = False,
    batch: bool = False,
    table_options: dict | None = None,
) -> tuple[JudgeRun, list[str]]:
    """The judge run with the paper's templates (the text Userbench ships, pinned) and the
    authors' judge parameters; nothing is called yet. Items without the reference a template
    judges against refuse the run unless `exclude_missing_references` (as for any run); answers
    cut off at max_tokens are left out unless `include_cut_off`.
    Returns the run and notes for the researcher."""
    template_set = template_set or benchmark.template_set.name
    templates, notes = templates_as_published(template_set=template_set, mode=benchmark.mode)
    try:
        spec = run_spec_by_names(
            workspace_id=dataset.workspace_id,
            dataset=dataset.name,
            mode=benchmark.mode,
            judge_model=judge_model,
            models=models,
            reference_model=reference_model,
            endpoint=endpoint_name,
            concurrency=concurrency,
            seed=seed,
            temperature=benchmark.judge_temperature,
            max_tokens=benchmark.judge_max_tokens,
            system_prompt=benchmark.judge_system_prompt,
            template_set=template_set,
            templates=templates,
            exclude_missing_references=exclude_missing_references,
            include_cut_off=include_cut_off,
            batch=batch,
            # Each order of a pair its own battle (Arena-Hard) needs both orders judged.
            **({"both_orders": True} if benchmark.battles else {}),
        )
        run = run_create(spec=spec)
    except RunError as error:
        raise ReproduceError(str(error)) from None
    # Recorded on the run, so that `judge_resume` after a crash ends with the same table.
    run.manifest = {**run.manifest, "reproduce": {"benchmark": benchmark.name, **(table_options or {})}}
    run.save(update_fields=["manifest"])
    return run, notes


def reproduction_table(
    *, benchmark: Benchmark, run: JudgeRun, fold_api: bool = True, failures_as_minus_one: bool = False
) -> tuple[object, list[str]]:
    """The run's results as the paper's table: (data, text lines)."""
    board = run_leaderboard(
        run=run, by=benchmark.table_groups, fold_api=fold_api, failures_as_minus_one=failures_as_minus_one
    )
    return benchmark.table(board)


def reproduction_table_of(*, run: JudgeRun) -> list[str] | None:
    """The paper's table of a run `reproduce` made, with the options it was asked for (the lines
    `reproduce` prints); None for any other run."""
    asked = (run.manifest or {}).get("reproduce")
    if not isinstance(asked, dict):
        return None
    benchmark = BENCHMARKS.get(str(asked.get("benchmark")))
    if benchmark is None:
        return None
    _table, lines = reproduction_table(
        benchmark=benchmark,
        run=run,
        fold_api=not asked.get("api_apart", False),
        failures_as_minus_one=bool(asked.get("failures_as_minus_one", False)),
    )
    return lines


def _plain(value):
    """The table as JSON: dataclass cells become their dicts."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value.as_dict() if hasattr(value, "as_dict") else value


def reproduction_manifest(
    *,
    benchmark: Benchmark,
    data_dir: Path | None,
    files: list[dict],
    checks: list[dict],
    dataset: Dataset,
    imported: bool,
    limit: int | None,
    answers: list[dict],
    run: JudgeRun,
    table: object,
    table_options: dict,
    notes: list[str],
) -> dict:
    """Everything the reproduction used, as JSON: data files with sha256, the dataset and its content
    hash, the templates (name, version, sha256), the judge's and the generation's parameters, the
    judge model, the endpoint's URL (never a key), Userbench's version and commit, and the table."""
    run.refresh_from_db()
    recorded = run_manifest(run=run)
    preset = benchmark.generation_preset
    return {
        "format": FORMAT,
        "recorded_at": timezone.now().isoformat(),
        "benchmark": benchmark.name,
        "paper": benchmark.paper,
        "template_set": recorded.get("template_set"),
        "userbench": {"version": __version__, **source_commit()},
        "data": {
            "dir": str(data_dir.resolve()) if data_dir is not None else None,
            "from": benchmark.data_from,
            "files": [*files, *[a["imported_from"] for a in answers if a["imported_from"]]],
            "published_config": checks,
        },
        "dataset": {
            "name": dataset.name,
            "items": dataset.items.count(),
            "content_hash": dataset_content_hash(dataset=dataset),
            "imported_now": imported,
            "limit": limit,
        },
        "templates": [
            {"name": t["name"], "version": t["version"], "language": t["language"], "sha256": t["text_hash"]}
            for t in recorded["templates"]
        ],
        "judge": {
            "model": run.judge_model,
            "mode": run.mode,
            "temperature": run.temperature,
            "max_tokens": run.max_tokens,
            "system_prompt": run.system_prompt,
            "system_prompt_sha256": text_hash(run.system_prompt) if run.system_prompt else None,
            "source": benchmark.judge_source,
        },
        "generation": {
            "preset": preset.name,
            "temperature": "by category" if preset.temperature_by_category else preset.temperature,
            "system_prompt": preset.system_prompt,
            "max_tokens": preset.max_tokens,
            "source": preset.source,
        },
        "endpoint": recorded["endpoint"],
        "models": answers,
        "reference_model": run.reference_model.name if run.reference_model is not None else None,
        "run": {
            "id": run.pk,
            "status": run.status,
            "judgments": run.judgments.count(),
            "parse_failures": run.judgments.parse_failures().count(),
            "call_failures": run.judgments.call_failures().count(),
            "cut_off": run.judgments.cut_off().count(),
            "manifest": recorded,
        },
        "table": {"layout": benchmark.name, **table_options, "data": _plain(table)},
        "notes": notes,
    }
