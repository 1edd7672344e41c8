"""Making a judge run: its row, its candidates and template versions, its shards and its
manifest, from one RunSpec. Nothing is called yet: `run_enqueue` (judging/dispatch.py)
hands the shards to the workers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from core.workspaces import in_workspace
from curation.datasets.selectors import DatasetNotFound, dataset_by_name
from judging.answers.candidates import probe_answers_ensure
from judging.answers.versions import current_answer_sets
from judging.errors import RunError, RunStartConflict
from judging.models import CandidateModel, JudgeRun, JudgeShard
from judging.runs.manifest import run_manifest_build
from judging.runs.planning import run_plan
from judging.runs.spec import RunSpec, concurrency_resolve
from llm.batch import batch_api_check
from llm.config import CallKind, default_endpoint_limits, max_tokens_resolve
from llm.errors import EndpointError
from llm.models import Endpoint
from llm.selectors import endpoint_by_name, endpoint_config


def run_start_once(
    *, spec: RunSpec, created_by: User, start_key: str, start_request: dict | None = None
) -> tuple[JudgeRun, bool]:
    """The run `start_key` started for this person, or a new one made with it: (run, made now).

    `start_key` is "page:<token>" (the one-time token of a /runs/new/ preview: its second
    submit, after the back button, shows the run it started) or "api:<Idempotency-Key>";
    empty, a run is always made. With `start_request` (what the API was asked, as plain JSON),
    the same key asked with other values raises RunStartConflict naming them. Two starts with
    one key at once make one run: the database refuses the second row, which then reads the
    first."""
    if not start_key:
        return run_create(spec=spec, created_by=created_by), True
    existing = _started_with(created_by, start_key)
    if existing is None:
        try:
            return run_create(spec=spec, created_by=created_by, start_key=start_key, start_request=start_request), True
        except IntegrityError:
            existing = _started_with(created_by, start_key)
            if existing is None:
                raise
    if start_request is not None:
        differ = sorted(
            name
            for name in set(start_request) | set(existing.start_request)
            if start_request.get(name) != existing.start_request.get(name)
        )
        if differ:
            raise RunStartConflict(
                _("This Idempotency-Key already started run #%(id)d with other values: %(fields)s.")
                % {"id": existing.pk, "fields": ", ".join(differ)},
                run=existing,
                fields=differ,
            )
    return existing, False


def _started_with(created_by: User, start_key: str) -> JudgeRun | None:
    return JudgeRun.objects.filter(created_by=created_by, start_key=start_key).first()


def run_create(
    *, spec: RunSpec, created_by: User | None = None, start_key: str = "", start_request: dict | None = None
) -> JudgeRun:
    """A run over the dataset's answers by the spec's candidates, split into shards. Nothing is
    called yet, except for a batch run: its endpoint is asked first (one cheap request, before
    anything is written) whether it offers the Batch API, and refused with RunError if not.

    The probe's pseudo-candidates named among the candidates are left out (the spec's
    `injection_probe` brings them back, reported apart). The run records its parameters:
    `max_tokens` defaults to the endpoint's, else judging's default, and the concurrency is
    resolved once (`concurrency_resolve`). The run's manifest (judging/runs/manifest.py) is recorded
    with it. Raises RunError with a message a researcher can act on; then nothing is written.
    """
    run_batch_check(spec=spec)
    return _run_write(spec=spec, created_by=created_by, start_key=start_key, start_request=start_request or {})


def run_batch_check(*, spec: RunSpec) -> None:
    """A batch run's endpoint must offer the Batch API: asked once (a cheap request), RunError
    naming the endpoint when it does not. Nothing for a live run."""
    if not spec.batch:
        return
    try:
        batch_api_check(
            endpoint_config(
                spec.endpoint.name if spec.endpoint is not None else None, workspace_id=spec.dataset.workspace_id
            )
        )
    except EndpointError as error:
        raise RunError(str(error), parameter="batch") from None


@transaction.atomic
def _run_write(*, spec: RunSpec, created_by: User | None, start_key: str, start_request: dict) -> JudgeRun:
    spec = replace(spec, candidates=tuple(c for c in spec.candidates if not c.is_probe))
    probes = probe_answers_ensure(dataset=spec.dataset) if spec.injection_probe else []
    plan = run_plan(spec=spec, probes=probes)
    limit, auto = concurrency_resolve(spec.concurrency, endpoint=spec.endpoint)
    run = JudgeRun.objects.create(
        dataset=spec.dataset,
        # A run stays in its dataset's workspace.
        workspace_id=spec.dataset.workspace_id,
        mode=spec.mode,
        judge_model=spec.judge_model,
        endpoint=spec.endpoint,
        reference_model=spec.reference_model,
        both_orders=spec.both_orders,
        seed=plan.seed,
        concurrency=limit,
        concurrency_auto=auto,
        temperature=spec.temperature,
        max_tokens=max_tokens_resolve(
            CallKind.JUDGING, stated=_endpoint_max_tokens(spec.endpoint), override=spec.max_tokens
        ),
        system_prompt=spec.system_prompt,
        timeout_seconds=spec.timeout_seconds,
        total=plan.calls,
        created_by=created_by,
        status=JudgeRun.Status.PENDING,
        judge_provider=spec.judge_provider[:64],
        judge_family=spec.judge_family[:64],
        injection_probe=bool(probes),
        batch=spec.batch,
        start_key=start_key,
        start_request=start_request,
    )
    run.candidates.set(plan.candidates)
    run.templates.set(plan.templates.values())
    judged = [*plan.candidates, *probes, *([spec.reference_model] if spec.reference_model else [])]
    run.answer_sets.set(
        [s for s in spec.answer_sets if s.model_id in {m.pk for m in judged}]
        if spec.answer_sets is not None
        else current_answer_sets(dataset=spec.dataset, models=judged)
    )
    units, shard_size = plan.units, spec.shard_size
    JudgeShard.objects.bulk_create(
        [
            JudgeShard(run=run, index=index, units=[list(unit) for unit in units[start : start + shard_size]])
            for index, start in enumerate(range(0, len(units), shard_size))
        ]
    )
    run.manifest = run_manifest_build(
        run=run,
        template_set=plan.family,
        shard_size=shard_size,
        probe_models=probes,
        excluded_without_reference=plan.excluded_without_reference,
        include_cut_off=spec.include_cut_off,
        cut_off_left_out=plan.cut_off_left_out,
    )
    run.save(update_fields=["manifest"])
    return run


def run_spec_by_names(
    *,
    dataset: str,
    models: Sequence[str],
    reference_model: str | None = None,
    endpoint: str | None = None,
    user=None,
    workspace_id: int | None = None,
    **parameters,
) -> RunSpec:
    """A RunSpec with the dataset, models and endpoint named as a researcher types them (the
    API, `judge`, `reproduce`); `parameters` are the spec's other fields.

    An unknown name raises RunError naming it; `endpoint` None or "default" is the default endpoint.
    With a `user` (the API), a dataset or endpoint of another workspace is unknown as well; with a
    `workspace_id` (a command's --workspace), the dataset is looked up in that workspace only."""
    try:
        found = dataset_by_name(name=dataset, user=user, workspace_id=workspace_id)
    except DatasetNotFound as error:
        raise RunError(str(error), parameter="dataset") from None
    names = [name.strip() for name in models if name.strip()]
    # The dataset's workspace's models: names are unique there, not across the server.
    models_here = in_workspace(CandidateModel.objects.all(), found.workspace_id)
    candidates = list(models_here.filter(name__in=names))
    unknown = sorted(set(names) - {c.name for c in candidates})
    if unknown:
        raise RunError(
            _("Unknown model(s): %(names)s. Import or generate their answers first.") % {"names": ", ".join(unknown)},
            parameter="candidates",
        )
    reference = None
    if reference_model:
        reference = models_here.filter(name=reference_model).first()
        if reference is None:
            raise RunError(
                _("Unknown reference model %(name)s.") % {"name": repr(reference_model)}, parameter="reference_model"
            )
    chosen_endpoint = None
    if endpoint and endpoint != "default":
        try:
            # Only the dataset's workspace's endpoints: a person in two workspaces cannot run one's
            # dataset on the other's endpoint (and is told nothing of it).
            chosen_endpoint = endpoint_by_name(name=endpoint, user=user, workspace_id=found.workspace_id)
        except EndpointError:
            # The API names only the endpoint asked for, not the others the server knows.
            raise RunError(_("Unknown endpoint %(name)s.") % {"name": repr(endpoint)}, parameter="endpoint") from None
    return RunSpec(
        dataset=found, candidates=tuple(candidates), reference_model=reference, endpoint=chosen_endpoint, **parameters
    )


def _endpoint_max_tokens(endpoint: Endpoint | None) -> int | None:
    """The endpoint's own max_tokens (no endpoint: OPENAI_MAX_TOKENS), or None."""
    if endpoint is not None:
        return endpoint.max_tokens
    try:
        return default_endpoint_limits().get("max_tokens")
    except EndpointError:
        return None
