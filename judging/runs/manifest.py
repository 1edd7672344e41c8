"""A run's manifest: what it was made from, recorded when it is created, so that it can be made
again (`rerun`) and so that two runs that disagree can be told apart by what changed.

It records the dataset version and its content hash, each template version and its text hash,
the judge and generation parameters, the endpoint's base URL (never a key, nor the name of the
variable holding one), the model names the endpoint reported, the seeds, the Userbench version
and the time. Hashes are sha256 in hexadecimal over canonical JSON (sorted keys, UTF-8), so the
same content hashes the same on SQLite and PostgreSQL.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator

from django.db.models import Count
from django.utils import timezone

from core import __version__
from curation.models import Dataset
from judging.models import Answer, AnswerSet, CandidateModel, JudgeRun, JudgeTemplate
from llm.errors import EndpointError
from llm.selectors import endpoint_row_config

FORMAT = "userbench-run-manifest/1"
# What a dataset item is, for its content hash: its content, never its database row (ids,
# creators and links to the cases it came from differ between copies of the same version).
ITEM_FIELDS = (
    "external_id",
    "question",
    "reference",
    "intent",
    "category",
    "subcategory",
    "language",
    "country",
    "metadata",
    "excluded",
)
# Per-answer facts kept apart from the generation parameters they sit with in Answer.parameters.
NOT_PARAMETERS = ("cached", "reported_model")


def canonical(value) -> str:
    """JSON with sorted keys and no spacing choices left open: the text a hash is taken of."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _digest(lines: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def text_hash(text: str) -> str:
    """sha256 of a text as stored (a template, exactly as written)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


CHUNK = 2000


def _in_id_order(queryset, key: str, fields: Iterable[str]) -> Iterator[tuple]:
    """The rows' `fields` in `key` order, CHUNK rows per query (memory stays flat). Pages by key
    rather than a server-side cursor: PostgreSQL plans a cursor for its first rows, and for one
    dataset among many that meant walking every dataset's rows (2.8 s instead of 8 ms for 3,692
    answers of a model that had answered six datasets)."""
    fields = tuple(fields)
    last = None
    while True:
        page = queryset if last is None else queryset.filter(**{f"{key}__gt": last})
        chunk = list(page.order_by(key).values_list(key, *fields)[:CHUNK])
        for row in chunk:
            yield row[1:]
        if len(chunk) < CHUNK:
            return
        last = chunk[-1][0]


def dataset_content_hash(*, dataset: Dataset) -> str:
    """sha256 over the dataset's items, one canonical JSON line of ITEM_FIELDS per item, in id order."""
    rows = _in_id_order(dataset.items.all(), "id", ITEM_FIELDS)
    return _digest(canonical(list(row)) for row in rows)


def _model_answers(dataset: Dataset, model: CandidateModel, answer_set: AnswerSet | None):
    if answer_set is None:
        return Answer.objects.filter(item__dataset=dataset, model=model)
    return Answer.all_versions.filter(answer_set=answer_set)


def answers_hash(*, dataset: Dataset, model: CandidateModel, answer_set: AnswerSet | None = None) -> str:
    """sha256 over the model's answers on the dataset (of `answer_set`, else the current ones),
    [external_id, text] per line in item id order."""
    rows = _in_id_order(_model_answers(dataset, model, answer_set), "item_id", ("item__external_id", "text"))
    return _digest(canonical(list(row)) for row in rows)


def dataset_entry(dataset: Dataset) -> dict:
    return {
        "id": dataset.pk,
        "name": dataset.name,
        "source": dataset.source,
        "version": dataset.version,
        "frozen_at": dataset.frozen_at.isoformat() if dataset.frozen_at else None,
        "items": dataset.items.count(),
        "content_hash": dataset_content_hash(dataset=dataset),
    }


def template_entry(template: JudgeTemplate) -> dict:
    return {
        "id": template.pk,
        "name": template.name,
        "version": template.version,
        "mode": template.mode,
        "language": template.language,
        "text_hash": text_hash(template.text),
    }


def model_entry(model: CandidateModel, dataset: Dataset, answer_set: AnswerSet | None = None) -> dict:
    """A candidate (or reference) model and its answers on the dataset (those of `answer_set`, the
    version a run pinned, else the current ones): which version, how many, how they were made
    (origins, generation parameters with counts, model names the endpoint reported) and their hash."""
    origins: Counter = Counter()
    parameters: Counter = Counter()
    reported: Counter = Counter()
    # Counted by the database per distinct (origin, parameters): a few groups to decode instead
    # of a JSON document per answer (run_create waits for this before its first call).
    groups = (
        _model_answers(dataset, model, answer_set)
        .values_list("origin", "parameters")
        .annotate(answers=Count("id"))
        .order_by()
    )
    for origin, given, count in groups:
        origins[origin] += count
        given = given if isinstance(given, dict) else {}
        if given.get("reported_model"):
            reported[given["reported_model"]] += count
        kept = {key: value for key, value in given.items() if key not in NOT_PARAMETERS}
        if kept:
            parameters[canonical(kept)] += count
    return {
        "name": model.name,
        "provider": model.provider,
        "family": model.family,
        "probe": model.is_probe,
        "answers": sum(origins.values()),
        "answers_version": answer_set.version if answer_set is not None else None,
        "answers_hash": answers_hash(dataset=dataset, model=model, answer_set=answer_set),
        "origins": dict(sorted(origins.items())),
        "generation": [{"parameters": json.loads(key), "answers": count} for key, count in sorted(parameters.items())],
        "reported_models": dict(sorted(reported.items())),
    }


def endpoint_entry(run: JudgeRun) -> dict:
    """The endpoint by name and base URL: no key, no key variable, no header."""
    name = run.endpoint.name if run.endpoint is not None else "default"
    try:
        # The run's own endpoint row (of its workspace), never another team's of the same name.
        base_url = endpoint_row_config(run.endpoint).base_url
    except EndpointError:
        base_url = None
    return {"name": name, "base_url": base_url}


def run_manifest_build(
    *,
    run: JudgeRun,
    template_set: str,
    shard_size: int,
    probe_models: Iterable[CandidateModel] = (),
    excluded_without_reference: Iterable[str] = (),
    include_cut_off: bool = False,
    cut_off_left_out: int = 0,
) -> dict:
    """The manifest of a run just created (judging.runs.creation.run_create stores it on the run).
    `excluded_without_reference`: external ids of the items the researcher chose to leave out
    because their template judges against a reference they lack. `include_cut_off`: whether
    answers cut off at max_tokens were judged; `cut_off_left_out`: how many were left out."""
    excluded = sorted(excluded_without_reference)
    pinned = {answer_set.model_id: answer_set for answer_set in run.answer_sets.all()}

    def entry(model: CandidateModel) -> dict:
        return model_entry(model, run.dataset, pinned.get(model.pk))

    return {
        "format": FORMAT,
        "userbench_version": __version__,
        "recorded_at": timezone.now().isoformat(),
        "run": run.pk,
        "rerun_of": run.rerun_of_id,
        "dataset": dataset_entry(run.dataset),
        "mode": run.mode,
        "template_set": template_set,
        "templates": [template_entry(t) for t in run.templates.order_by("name", "version")],
        "judge": {
            "model": run.judge_model,
            "provider": run.judge_provider,
            "family": run.judge_family,
            # None: no temperature was sent, the server's default applied.
            "temperature": run.temperature,
            "max_tokens": run.max_tokens,
            "system_prompt": run.system_prompt,
            "concurrency": "auto" if run.concurrency_auto else run.concurrency,
            "timeout_seconds": run.timeout_seconds,
            "both_orders": run.both_orders,
            "shard_size": shard_size,
            "fresh_calls": run.fresh_calls,
            # Sent through the provider's Batch API; its batches are listed under "batches".
            "batch": run.batch,
        },
        "endpoint": endpoint_entry(run),
        "seeds": {"pair_order": run.seed, "bootstrap": run.seed},
        "candidates": [entry(model) for model in run.candidates.order_by("name")],
        "reference_model": entry(run.reference_model) if run.reference_model is not None else None,
        "injection_probe": run.injection_probe,
        "probes": [entry(model) for model in sorted(probe_models, key=lambda m: m.name)],
        "exclude_missing_references": bool(excluded),
        "excluded_without_reference": {"count": len(excluded), "items": excluded},
        "include_cut_off": include_cut_off,
        "cut_off_left_out": cut_off_left_out,
    }


def run_manifest(*, run: JudgeRun) -> dict:
    """The run's manifest as recorded, plus the judge model names the endpoint reported in its
    replies so far ({name: judgments}; "" counts replies that named none, cached ones included).

    A run made before manifests were recorded gets one built now from its rows, marked
    "reconstructed": its times and hashes describe today's data, not the data it ran on."""
    manifest = dict(run.manifest or {})
    if not manifest:
        manifest = run_manifest_build(run=run, template_set="", shard_size=0)
        manifest["reconstructed"] = True
    reported = run.judgments.replied().values_list("reported_model").annotate(n=Count("pk")).order_by("reported_model")
    manifest["judge_reported_models"] = {name: count for name, count in reported}
    manifest["batches"] = run_batches_entry(run=run)
    return manifest


def run_batches_entry(*, run: JudgeRun) -> list[dict]:
    """The batches the run sent through the provider's Batch API, as the provider named them:
    batch and input file ids, requests, how each ended (never a key), the result lines that named
    a request a second time or none of its requests (ignored), and why it failed, if it did."""
    return [
        {
            "batch_id": job.batch_id,
            "input_file_id": job.input_file_id,
            "requests": job.requests,
            "status": job.provider_status or job.status,
            "completed": job.completed,
            "failed": job.failed,
            "duplicate_lines": job.duplicate_lines,
            "unknown_lines": job.unknown_lines,
            "error": job.error,
        }
        for job in run.batch_jobs.order_by("pk")
    ]
