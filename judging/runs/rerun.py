"""`rerun RUN`: an identical run made from a run's manifest, to read the judge's drift.

Identical means the same dataset content, the same answers, the exact template versions, the
same judge model, endpoint, parameters and seed (so the same sides in pairwise runs). Anything
that changed since is named, and the re-run is refused unless the researcher allows it.
By default the re-run asks the endpoint again (fresh calls): with the response cache it would
only read back the replies it already has, which measures nothing.
"""

from __future__ import annotations

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from core.archiving import refuse_if_archived
from judging.errors import RunError
from judging.models import JudgeRun
from judging.prompts.templates import run_template_family
from judging.runs.creation import run_create
from judging.runs.manifest import answers_hash, dataset_content_hash, endpoint_entry, run_manifest, text_hash
from judging.runs.spec import DEFAULT_SHARD_SIZE, RunSpec


class RerunRefused(RunError):
    """An identical re-run is not possible: something changed since the original run."""


def _changes(*, run: JudgeRun, manifest: dict) -> list[tuple[str, dict]]:
    """What differs today from what the manifest recorded: (sentence, its values) each."""
    changes: list[tuple[str, dict]] = []
    recorded = manifest["dataset"]["content_hash"]
    now = dataset_content_hash(dataset=run.dataset)
    if recorded != now:
        changes.append(
            (
                gettext_noop(
                    "Dataset '%(dataset)s' changed since run %(run)s: content hash %(recorded)s… is now %(now)s…."
                ),
                {"dataset": run.dataset.name, "run": run.pk, "recorded": recorded[:12], "now": now[:12]},
            )
        )
    recorded_templates = {entry["name"]: entry["text_hash"] for entry in manifest.get("templates", [])}
    for template in run.templates.all():
        if recorded_templates.get(template.name) not in (None, text_hash(template.text)):
            changes.append(
                (
                    gettext_noop("Template %(template)s v%(version)s no longer has the text run %(run)s used."),
                    {"template": template.name, "version": template.version, "run": run.pk},
                )
            )
    models = [*run.candidates.all(), *([run.reference_model] if run.reference_model is not None else [])]
    recorded_answers = {
        entry["name"]: entry["answers_hash"]
        for entry in [
            *manifest.get("candidates", []),
            *([manifest["reference_model"]] if manifest.get("reference_model") else []),
        ]
    }
    # The re-run judges the versions the original pinned, not the ones that replaced them since.
    pinned = {answer_set.model_id: answer_set for answer_set in run.answer_sets.all()}
    for model in models:
        if model.name in recorded_answers and recorded_answers[model.name] != answers_hash(
            dataset=run.dataset, model=model, answer_set=pinned.get(model.pk)
        ):
            changes.append(
                (
                    gettext_noop("The answers of %(model)s on '%(dataset)s' changed since run %(run)s."),
                    {"model": model.name, "dataset": run.dataset.name, "run": run.pk},
                )
            )
    if not run.templates.exists():
        changes.append(
            (gettext_noop("Run %(run)s recorded no template versions: the newest ones would judge."), {"run": run.pk})
        )
    recorded_url = (manifest.get("endpoint") or {}).get("base_url")
    now_url = endpoint_entry(run)["base_url"]
    if recorded_url != now_url:
        changes.append(
            (
                gettext_noop("The endpoint's base URL was %(recorded)s and is now %(now)s."),
                {"recorded": recorded_url, "now": now_url},
            )
        )
    return changes


@transaction.atomic
def run_rerun(*, run: JudgeRun, fresh_calls: bool = True, allow_changes: bool = False, created_by=None) -> JudgeRun:
    """A new run identical to `run`, recorded as its re-run, with nothing called yet.

    Raises RunError naming every change since the original when `allow_changes` is False; with
    it, the re-run judges today's data and its manifest lists what changed. An archived run, or a
    run whose dataset is archived: ArchivedError, before the changes are looked for."""
    refuse_if_archived(run)
    refuse_if_archived(run.dataset)
    manifest = run_manifest(run=run)
    found = _changes(run=run, manifest=manifest)
    changes = [sentence % values for sentence, values in found]
    if changes and not allow_changes:
        raise RerunRefused(
            "\n".join(
                [
                    _("An identical run is not possible:"),
                    *(_(sentence) % values for sentence, values in found),
                    _("Allow the changes to judge today's data instead."),
                ]
            ),
            parameter="allow_changes",
        )
    templates = tuple(run.templates.all()) or None
    spec = RunSpec(
        dataset=run.dataset,
        mode=run.mode,
        judge_model=run.judge_model,
        candidates=tuple(run.candidates.all()),
        reference_model=run.reference_model,
        endpoint=run.endpoint,
        concurrency="auto" if run.concurrency_auto else run.concurrency,
        timeout_seconds=run.timeout_seconds,
        both_orders=run.both_orders,
        seed=run.seed,
        shard_size=manifest["judge"].get("shard_size") or DEFAULT_SHARD_SIZE,
        temperature=run.temperature,
        max_tokens=run.max_tokens,
        system_prompt=run.system_prompt,
        template_set=run_template_family(run, templates or []),
        judge_provider=run.judge_provider,
        judge_family=run.judge_family,
        templates=templates,
        injection_probe=run.injection_probe,
        # The original's choice to leave out items without a reference answer, as its manifest records it.
        exclude_missing_references=bool(manifest.get("exclude_missing_references")),
        include_cut_off=bool(manifest.get("include_cut_off")),
        answer_sets=tuple(run.answer_sets.all()) or None,
    )
    new = run_create(spec=spec, created_by=created_by)
    new.fresh_calls = fresh_calls
    new.rerun_of = run
    new.manifest["judge"]["fresh_calls"] = fresh_calls
    new.manifest["rerun_of"] = run.pk
    if changes:
        new.manifest["changes_since_original"] = changes
    new.save(update_fields=["fresh_calls", "rerun_of", "manifest"])
    return new
