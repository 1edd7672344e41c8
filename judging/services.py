"""Writes of the judging app: templates, runs and their shards, cancel, resume, re-parse.

The engine that executes a run's shards lives in `judging/execution.py`; generation of
candidate answers in `judging/generation.py`.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import Avg, Count, F, Q, Sum
from django.db.models.functions import Coalesce, Length
from django.utils import timezone
from django.utils.translation import gettext as _

from core.audit import AuditAction, audit_record
from core.errors import UserbenchError
from curation.datasets.import_checks import unstorable
from curation.datasets.services import difficulty_filter_apply
from curation.models import Dataset, DifficultyFilter, Item
from judging.manifest import run_manifest_build
from judging.models import (
    Answer,
    CandidateModel,
    JudgeMode,
    JudgeRun,
    JudgeShard,
    JudgeTemplate,
    Judgment,
    RunWorker,
)
from judging.parsing import parse_pairwise, parse_pointwise
from judging.probe import ATTACKS
from judging.prompts.building import (
    TEMPLATE_SETS,
    criteria_for_template,
    default_templates,
    template_name_for,
    template_problems,
)
from judging.workers import worker_is_gone
from llm.client import CallKind, EndpointError, default_endpoint_limits, endpoint_signature, max_tokens_for
from llm.models import Endpoint

# A shard is what a worker claims, heartbeats and gives back, not a unit of waiting (calls flow
# on across shards): small shards let the workers sharing a run finish together.
DEFAULT_SHARD_SIZE = 200


class RunError(UserbenchError):
    """A judge run or template that cannot be made as asked; nothing was written."""


def stale_after() -> timedelta:
    return timedelta(seconds=float(settings.JUDGING_STALE_SECONDS))


def template_family(dataset: Dataset) -> str:
    """The template set a dataset is judged with unless the run names another."""
    return "alignbench" if dataset.source == Dataset.Source.ALIGNBENCH else "urs"


def run_template_family(run: JudgeRun, templates) -> str:
    """The template set a run was created with, read from the templates it recorded.

    A pointwise run's templates all belong to the set it was created with (e.g. only
    `urs-code/...`); a run without templates, or a pairwise one, uses its dataset's set."""
    sets = {template.name.split("/", 1)[0] for template in templates}
    if len(sets) == 1 and next(iter(sets)) in TEMPLATE_SETS:
        return next(iter(sets))
    return template_family(run.dataset)


def item_template_name(run: JudgeRun, item: Item, family: str) -> str:
    return template_name_for(
        family=family,
        mode=run.mode,
        intent=item.intent,
        category=item.category,
        subcategory=item.subcategory,
        language=item.language,
    )


@transaction.atomic
def templates_ensure_defaults() -> int:
    """Create version 1 of every built-in template that is missing; returns how many were made."""
    existing = set(JudgeTemplate.objects.values_list("name", flat=True))
    missing = [
        JudgeTemplate(name=t.name, version=1, mode=t.mode, language=t.language, text=t.text)
        for t in default_templates()
        if t.name not in existing
    ]
    JudgeTemplate.objects.bulk_create(missing)
    return len(missing)


@transaction.atomic
def templates_as_published(*, template_set: str | None, mode: str) -> tuple[list[JudgeTemplate], list[str]]:
    """A version of every built-in template of the set (pairwise: ChineseAlpacaEval's prompt) whose
    text is exactly the one Userbench ships as the paper's, for a run that must judge with it
    whatever researchers changed since. Returns the versions and a note for each one stored anew.

    The newest version holding that text is taken; a name with none (never seeded, or edited
    since) gets it as its next version."""
    wanted = [
        template
        for template in default_templates()
        if template.mode == mode and (mode == JudgeMode.PAIRWISE or template.name.split("/", 1)[0] == template_set)
    ]
    if not wanted:
        raise RunError(f"Unknown template set {template_set!r}; choose among {', '.join(TEMPLATE_SETS)}.")
    versions = {}
    for row in JudgeTemplate.objects.filter(name__in=[t.name for t in wanted]).order_by("name", "version"):
        versions.setdefault(row.name, []).append(row)
    chosen, notes = [], []
    for template in wanted:
        rows = versions.get(template.name, [])
        same = [row for row in rows if row.text == template.text]
        if same:
            chosen.append(same[-1])
            continue
        stored = JudgeTemplate.objects.create(
            name=template.name,
            version=rows[-1].version + 1 if rows else 1,
            mode=template.mode,
            language=template.language,
            text=template.text,
        )
        chosen.append(stored)
        if rows:
            notes.append(
                f"Template {template.name}: no version held the published text (v{rows[-1].version} was edited); "
                f"it is stored again as v{stored.version}."
            )
    return chosen, notes


def template_placeholders_check(*, text: str, mode: str) -> None:
    """Refuse a judge template whose placeholders `judging.execution.build_prompt` cannot fill.

    The one check of template text, for the template pages and for `import_template` (call it
    before saving): prompts.template_problems names each unknown or misspelled `{name}` with
    its line, a close valid name and the valid ones, and a missing required placeholder.
    Raises RunError with all of them, one per line.
    """
    problems = template_problems(text, mode)
    if problems:
        raise RunError("\n".join(problems))


@transaction.atomic
def template_revise(
    *, template: JudgeTemplate, text: str, user: AbstractBaseUser | None = None
) -> tuple[JudgeTemplate, bool]:
    """Save an edit as a new version; runs keep pointing at the version they used.

    Returns (the version now current, whether it was made). Text equal to the latest version
    (surrounding whitespace aside) makes no new version. Raises RunError, writing nothing,
    for empty text or placeholders the judge prompt cannot fill (template_placeholders_check).
    """
    text = text.strip()
    if not text:
        raise RunError(_("A template cannot be empty."))
    template_placeholders_check(text=text, mode=template.mode)
    latest = (
        JudgeTemplate.objects.select_for_update().filter(name=template.name).order_by("-version").first() or template
    )
    if latest.text.strip() == text:
        return latest, False
    revised = JudgeTemplate.objects.create(
        name=template.name,
        version=latest.version + 1,
        mode=template.mode,
        language=template.language,
        text=text,
        created_by=user,
    )
    audit_record(
        actor=user,
        action=AuditAction.TEMPLATE_CHANGED,
        target=f"template:{template.name}",
        details={"version": revised.version, "from_version": template.version},
    )
    return revised, True


@transaction.atomic
def template_import(
    *, name: str, mode: str, language: str | None, text: str, user: AbstractBaseUser | None = None
) -> JudgeTemplate:
    """Store a prompt exactly as given (nothing stripped or normalised), as a new version when
    `name` exists. Raises RunError listing every problem; then nothing is written.

    Without `language`, a new name takes Chinese when the text has any CJK character and
    English otherwise; an existing name keeps its language."""
    problems = []
    if not name or len(name) > JudgeTemplate._meta.get_field("name").max_length:
        problems.append("Name the template (--name), at most 100 characters.")
    if language is not None and language not in ("en", "zh"):
        problems.append(f"Unknown language {language!r}; use en or zh.")
    if not text.strip():
        problems.append("The template is empty.")
    else:
        problems.extend(template_problems(text, mode))
    latest = JudgeTemplate.objects.select_for_update().filter(name=name).order_by("-version").first()
    if latest is not None and latest.mode != mode:
        problems.append(f"Template {name!r} is {latest.mode}; it cannot take a {mode} version.")
    if problems:
        raise RunError("\n".join(problems))
    if language is None:
        language = latest.language if latest else ("zh" if re.search(r"[\u4e00-\u9fff]", text) else "en")
    imported = JudgeTemplate.objects.create(
        name=name,
        version=(latest.version + 1) if latest else 1,
        mode=mode,
        language=language,
        text=text,
        created_by=user,
    )
    audit_record(
        actor=user,
        action=AuditAction.TEMPLATE_CHANGED,
        target=f"template:{name}",
        details={"version": imported.version, "imported": True},
    )
    return imported


def _latest_templates(names: set[str]) -> dict[str, JudgeTemplate]:
    latest: dict[str, JudgeTemplate] = {}
    for template in JudgeTemplate.objects.filter(name__in=names).order_by("name", "version"):
        latest[template.name] = template
    return latest


def pair_order(seed: int, item_id: int, model_id: int) -> int:
    """Which side the candidate takes (0: first, 1: second), reproducible from the run's seed."""
    return random.Random(f"{seed}:{item_id}:{model_id}").randrange(2)


# A judge's temperature as OpenAI-compatible servers accept it, and the longest system prompt taken.
TEMPERATURE_RANGE = (0.0, 2.0)
MAX_SYSTEM_PROMPT_CHARS = 20_000


def run_parameters_check(*, temperature: float | None, max_tokens: int | None, system_prompt: str) -> None:
    """Refuse judge parameters no server would take, naming the parameter (RunError).

    `temperature` None sends none (the server's default); `max_tokens` None sends none either."""
    low, high = TEMPERATURE_RANGE
    if temperature is not None and not low <= temperature <= high:
        raise RunError(
            f"The temperature must be between {low:g} and {high:g}, or unset to send none; got {temperature!r}."
        )
    if max_tokens is not None and max_tokens < 1:
        raise RunError(f"Max tokens must be at least 1, or unset to send none; got {max_tokens}.")
    if len(system_prompt) > MAX_SYSTEM_PROMPT_CHARS:
        raise RunError(
            f"The system prompt is {len(system_prompt):,} characters; the limit is {MAX_SYSTEM_PROMPT_CHARS:,}."
        )
    match = unstorable(system_prompt)
    if match is not None:
        raise RunError(
            f"The system prompt holds a character a database cannot store (NUL or a lone surrogate) "
            f"at character {match.start() + 1}."
        )


# Rough characters per token, for the cost estimate shown before a run starts.
CHARS_PER_TOKEN = {"en": 4.0, "zh": 1.5}
# A judge's reply length when the run sets no max_tokens: explanations per criterion, or a ranking.
TYPICAL_REPLY_TOKENS = {JudgeMode.POINTWISE: 400, JudgeMode.PAIRWISE: 60}


@dataclass(frozen=True)
class RunPlan:
    """What a run would do, computed before anything is written: its units of work (item, model,
    order), the templates it would use, and an estimate of the tokens it would send and receive."""

    candidates: tuple
    units: tuple[tuple[int, int, int], ...]
    templates: dict
    seed: int
    shard_size: int
    prompt_tokens: int
    completion_tokens: int
    family: str = ""

    @property
    def calls(self) -> int:
        return len(self.units)

    @property
    def shards(self) -> int:
        return -(-len(self.units) // self.shard_size)

    def cost(self, *, input_price, output_price) -> Decimal | None:
        """The estimate priced per million tokens; None when the input price is unknown."""
        if input_price is None:
            return None
        total = Decimal(self.prompt_tokens) * Decimal(input_price) + Decimal(self.completion_tokens) * Decimal(
            output_price or 0
        )
        return (total / Decimal(1_000_000)).quantize(Decimal("0.0001"))


def _tokens(chars: int, language: str) -> int:
    return int(chars / CHARS_PER_TOKEN.get(language, CHARS_PER_TOKEN["en"])) + 1


def run_plan(
    *,
    dataset: Dataset,
    mode: str,
    judge_model: str,
    candidates: list[CandidateModel],
    reference_model: CandidateModel | None = None,
    endpoint: Endpoint | None = None,
    concurrency: int | str | None = None,
    both_orders: bool = False,
    seed: int | None = None,
    shard_size: int = DEFAULT_SHARD_SIZE,
    max_tokens: int | None = None,
    timeout_seconds: float | None = None,
    template_set: str | None = None,
    probes: list[CandidateModel] = (),
    templates: list[JudgeTemplate] | None = None,
    system_prompt: str = "",
) -> RunPlan:
    """Everything run_create checks and computes, without writing: the units of work, the latest
    template versions they need (built-in ones are made if missing), and the token estimate.

    `probes` are the injection probe's pseudo-candidates (judging/probe.py), judged like the
    candidates and reported apart; `templates` pins exact template versions (a re-run); a
    `system_prompt` is sent with every call, so it counts in the estimate.
    `concurrency` is the run's total of calls in flight across all workers: a number, "auto"
    (the window finds the server's capacity), or None (the endpoint's stated limit, else auto).
    Raises RunError with a message a researcher can act on.
    """
    if mode not in JudgeMode.values:
        raise RunError(f"Unknown mode {mode!r}; use pointwise or pairwise.")
    if not judge_model:
        raise RunError("Name the judge model (--judge-model).")
    concurrency_resolve(concurrency, endpoint=endpoint)  # refused here, before anything is counted
    if max_tokens is not None and max_tokens < 1:
        raise RunError("max_tokens must be at least 1.")
    if timeout_seconds is not None and timeout_seconds <= 0:
        raise RunError("The timeout must be more than 0 seconds.")
    if shard_size < 1:
        raise RunError("Shard size must be at least 1.")
    if mode == JudgeMode.PAIRWISE and reference_model is None:
        raise RunError("A pairwise run needs a reference model (--reference-model).")
    if not candidates:
        raise RunError("Name at least one candidate model (--models).")
    if template_set is not None and template_set not in TEMPLATE_SETS:
        raise RunError(f"Unknown template set {template_set!r}; choose among {', '.join(TEMPLATE_SETS)}.")
    if mode == JudgeMode.PAIRWISE:
        candidates = [c for c in candidates if c.pk != reference_model.pk] or candidates
    seed = random.randrange(2**31) if seed is None else seed

    answer_chars = {
        (row["item_id"], row["model_id"]): row["chars"]
        for row in Answer.objects.filter(
            item__dataset=dataset, model__in=[*candidates, *probes, *([reference_model] if reference_model else [])]
        )
        .annotate(chars=Length("text"))
        .values("item_id", "model_id", "chars")
    }
    items = list(
        Item.objects.filter(dataset=dataset)
        .order_by("id")
        .annotate(question_chars=Length("question"), reference_chars=Length("reference"))
        .values("id", "intent", "category", "subcategory", "language", "question_chars", "reference_chars")
    )
    if not items:
        raise RunError(_("Dataset “%(name)s” has no items.") % {"name": dataset.name})
    units: list[tuple[int, int, int]] = []
    unit_names: list[str] = []
    unit_chars: list[tuple[int, str]] = []
    family = template_set or template_family(dataset)
    probe = JudgeRun(mode=mode)
    names_by_kind: dict[tuple, str] = {}  # a template per kind of item, not per item
    for item in items:
        kind = (item["intent"], item["category"], item["subcategory"], item["language"])
        name = names_by_kind.get(kind)
        if name is None:
            name = names_by_kind[kind] = item_template_name(
                probe,
                Item(
                    intent=item["intent"],
                    category=item["category"],
                    subcategory=item["subcategory"],
                    language=item["language"],
                ),
                family,
            )
        for candidate in [*candidates, *probes]:
            if (item["id"], candidate.pk) not in answer_chars:
                continue
            if reference_model is not None and (item["id"], reference_model.pk) not in answer_chars:
                continue
            if mode == JudgeMode.PAIRWISE:
                orders = [0, 1] if both_orders else [pair_order(seed, item["id"], candidate.pk)]
                other = answer_chars[(item["id"], reference_model.pk)]
            else:
                orders = [0]
                other = answer_chars[(item["id"], reference_model.pk)] if reference_model else item["reference_chars"]
            chars = item["question_chars"] + answer_chars[(item["id"], candidate.pk)] + other
            for order in orders:
                units.append((item["id"], candidate.pk, order))
                unit_names.append(name)
                unit_chars.append((chars, item["language"]))
    if not units:
        who = ", ".join(c.name for c in candidates)
        raise RunError(
            _("None of %(models)s has answers on dataset “%(name)s”: import or generate them first.")
            % {"models": who, "name": dataset.name}
        )

    names = set(unit_names)
    if templates is not None:
        chosen = {template.name: template for template in templates}
        missing = sorted(names - set(chosen))
        if missing:
            raise RunError(_("The templates given do not include %(names)s.") % {"names": ", ".join(missing)})
        templates = {name: chosen[name] for name in names}
    else:
        templates = _latest_templates(names)
        if set(templates) != names:
            templates_ensure_defaults()
            templates = _latest_templates(names)
    missing = sorted(names - set(templates))
    if missing:
        raise RunError(_("No judge template named %(names)s.") % {"names": ", ".join(missing)})
    template_tokens = {name: _tokens(len(t.text), t.language) for name, t in templates.items()}
    system_tokens = _tokens(len(system_prompt), "zh" if re.search(r"[\u4e00-\u9fff]", system_prompt) else "en")
    prompt_tokens = sum(
        template_tokens[name] + _tokens(chars, language) + (system_tokens if system_prompt else 0)
        for name, (chars, language) in zip(unit_names, unit_chars, strict=True)
    )
    return RunPlan(
        candidates=tuple(candidates),
        units=tuple(units),
        templates=templates,
        seed=seed,
        shard_size=shard_size,
        prompt_tokens=prompt_tokens,
        completion_tokens=len(units) * (max_tokens or TYPICAL_REPLY_TOKENS[mode]),
        family=family,
    )


@transaction.atomic
def run_create(
    *,
    dataset: Dataset,
    mode: str,
    judge_model: str,
    candidates: list[CandidateModel],
    reference_model: CandidateModel | None = None,
    endpoint: Endpoint | None = None,
    concurrency: int | str | None = None,
    both_orders: bool = False,
    seed: int | None = None,
    shard_size: int = DEFAULT_SHARD_SIZE,
    temperature: float | None = 0.0,
    max_tokens: int | None = None,
    system_prompt: str = "",
    timeout_seconds: float | None = None,
    template_set: str | None = None,
    created_by: AbstractBaseUser | None = None,
    judge_provider: str = "",
    judge_family: str = "",
    templates: list[JudgeTemplate] | None = None,
    injection_probe: bool = False,
) -> JudgeRun:
    """A run over the dataset's answers by `candidates`, split into shards. Nothing is called yet.

    Pairwise runs judge each candidate against `reference_model` on every item both answered,
    the side randomised per item with `seed` (recorded), or both sides with `both_orders`.
    Pointwise runs take the dataset's template set unless `template_set` names another
    (e.g. `urs-code`: the URS code's Chinese prompt for every question). `judge_provider` and
    `judge_family` say where the judge comes from, for the self-preference diagnostic.
    `templates`: the exact versions to judge with (a re-run); by default the newest of each name.
    `injection_probe`: also judge the probe's constant adversarial answers (judging/probe.py) on
    every item, as pseudo-candidates reported apart and never ranked.
    `temperature` (None: none sent, the server's default), `max_tokens` and `system_prompt` (a
    system message before each judge prompt when set) reach every call and are recorded.
    `concurrency` is the run's total of calls in flight across all workers: a number, "auto"
    (the window finds the server's capacity), or None (the endpoint's stated limit, else auto).
    `max_tokens` defaults to the endpoint's, else judging's default; the run records it, and
    `timeout_seconds` (from when a call is sent) overrides the endpoint's.
    The run's manifest (judging/manifest.py) is recorded with it. Raises
    RunError with a message a researcher can act on; then nothing is written.
    """
    run_parameters_check(temperature=temperature, max_tokens=max_tokens, system_prompt=system_prompt)
    if candidates and all(c.is_probe for c in candidates):
        raise RunError("Name at least one candidate model (--models) besides the probe's.")
    candidates = [c for c in candidates if not c.is_probe]
    probes = probe_answers_ensure(dataset=dataset) if injection_probe else []
    plan = run_plan(
        dataset=dataset,
        mode=mode,
        judge_model=judge_model,
        candidates=candidates,
        reference_model=reference_model,
        endpoint=endpoint,
        concurrency=concurrency,
        both_orders=both_orders,
        seed=seed,
        shard_size=shard_size,
        max_tokens=max_tokens,
        timeout_seconds=timeout_seconds,
        template_set=template_set,
        probes=probes,
        templates=templates,
        system_prompt=system_prompt,
    )
    family = plan.family
    limit, auto = concurrency_resolve(concurrency, endpoint=endpoint)
    run = JudgeRun.objects.create(
        dataset=dataset,
        mode=mode,
        judge_model=judge_model,
        endpoint=endpoint,
        reference_model=reference_model,
        both_orders=both_orders,
        seed=plan.seed,
        concurrency=limit,
        concurrency_auto=auto,
        temperature=temperature,
        max_tokens=max_tokens or _endpoint_max_tokens(endpoint) or settings.LLM_MAX_TOKENS[CallKind.JUDGING],
        system_prompt=system_prompt,
        timeout_seconds=timeout_seconds,
        total=plan.calls,
        created_by=created_by,
        status=JudgeRun.Status.PENDING,
        judge_provider=judge_provider[:64],
        judge_family=judge_family[:64],
        injection_probe=bool(probes),
    )
    run.candidates.set(plan.candidates)
    run.templates.set(plan.templates.values())
    units = plan.units
    JudgeShard.objects.bulk_create(
        [
            JudgeShard(run=run, index=index, units=[list(unit) for unit in units[start : start + shard_size]])
            for index, start in enumerate(range(0, len(units), shard_size))
        ]
    )
    run.manifest = run_manifest_build(run=run, template_set=family, shard_size=shard_size, probe_models=probes)
    run.save(update_fields=["manifest"])
    return run


@transaction.atomic
def run_create_by_names(
    *,
    dataset: str,
    models: list[str],
    reference_model: str | None = None,
    endpoint: str | None = None,
    **parameters,
) -> JudgeRun:
    """run_create with the dataset, models and endpoint named as a researcher types them (the API).

    An unknown name raises RunError naming it; `endpoint` None or "default" is the default endpoint."""
    found = Dataset.objects.filter(name=dataset).first()
    if found is None:
        raise RunError(f"No dataset named {dataset!r}.")
    names = [name.strip() for name in models if name.strip()]
    candidates = list(CandidateModel.objects.filter(name__in=names))
    unknown = sorted(set(names) - {c.name for c in candidates})
    if unknown:
        raise RunError(f"Unknown model(s): {', '.join(unknown)}. Import or generate their answers first.")
    reference = None
    if reference_model:
        reference = CandidateModel.objects.filter(name=reference_model).first()
        if reference is None:
            raise RunError(f"Unknown reference model {reference_model!r}.")
    chosen_endpoint = None
    if endpoint and endpoint != "default":
        chosen_endpoint = Endpoint.objects.filter(name=endpoint).first()
        if chosen_endpoint is None:
            raise RunError(f"Unknown endpoint {endpoint!r}.")
    return run_create(
        dataset=found, candidates=candidates, reference_model=reference, endpoint=chosen_endpoint, **parameters
    )


def _endpoint_max_tokens(endpoint: Endpoint | None) -> int | None:
    """The endpoint's own max_tokens (no endpoint: OPENAI_MAX_TOKENS), or None."""
    if endpoint is not None:
        return endpoint.max_tokens
    try:
        return default_endpoint_limits().get("max_tokens")
    except EndpointError:
        return None


def concurrency_resolve(concurrency: int | str | None, *, endpoint: Endpoint | None = None) -> tuple[int, bool]:
    """(calls in flight across the run, auto?) from a number, "auto", or None (the endpoint's
    stated limit, else auto; no endpoint: OPENAI_MAX_IN_FLIGHT, else auto). Auto runs are
    bounded by LLM_AUTO_MAX_IN_FLIGHT."""
    if concurrency is None:
        if endpoint is not None:
            stated = endpoint.max_in_flight
        else:
            try:
                stated = default_endpoint_limits().get("max_in_flight")
            except EndpointError:
                stated = None  # the run cannot call anyway; it says so when it starts
        concurrency = stated or "auto"
    if concurrency == "auto":
        return int(settings.LLM_AUTO_MAX_IN_FLIGHT), True
    try:
        limit = int(concurrency)
    except (TypeError, ValueError):
        raise RunError(f"Concurrency must be a whole number or auto, not {concurrency!r}.") from None
    if limit < 1:
        raise RunError("Concurrency must be at least 1.")
    if limit > 32767:
        raise RunError("Concurrency must be at most 32767.")
    return limit, False


def run_enqueue(*, run: JudgeRun) -> int:
    """Queue a task on the `judging` queue for each queued shard; returns how many were queued.

    A worker that takes one holds the run: it claims the run's next shards as its calls run
    low, so the others find their shard taken and end at once, unless a second worker got
    there first and shares the run. The run's watchdog is scheduled too (`run_watch`). Call it
    after the shards are committed.
    """
    if run.status in (JudgeRun.Status.PENDING, JudgeRun.Status.FAILED):
        JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING)
        run.status = JudgeRun.Status.RUNNING
    shard_ids = list(run.shards.filter(status=JudgeShard.Status.QUEUED).values_list("pk", flat=True))
    _shard_tasks_enqueue(shard_ids)
    run_watch_schedule(run_id=run.pk)
    return len(shard_ids)


def _shard_tasks_enqueue(shard_ids: list[int]) -> None:
    from judging.tasks import judge_shard_task  # tasks import the engine, which imports this module

    for shard_id in shard_ids:
        result = judge_shard_task.enqueue(shard_id)
        JudgeShard.objects.filter(pk=shard_id, task_id="").update(task_id=str(result.id)[:64])


def _abandoned(shard: JudgeShard, now) -> bool:
    """A running shard whose worker died: its heartbeat is stale, or its process is provably gone."""
    if shard.status != JudgeShard.Status.RUNNING:
        return False
    if shard.heartbeat_at is None or shard.heartbeat_at < now - stale_after():
        return True
    return worker_is_gone(shard.worker_id)


def _abandoned_shard_ids(run: JudgeRun, now) -> list[int]:
    running = run.shards.filter(status=JudgeShard.Status.RUNNING).only("pk", "status", "heartbeat_at", "worker_id")
    return [shard.pk for shard in running if _abandoned(shard, now)]


def watchdog_delay() -> timedelta:
    """How long after one look the run's watchdog looks again: a heartbeat goes stale by then."""
    return stale_after() + timedelta(seconds=float(settings.JUDGING_HEARTBEAT_SECONDS))


def run_watch_schedule(*, run_id: int) -> bool:
    """Make sure a watchdog task will look at the running run soon (one at a time: the run
    records when it is due, and a due time already past is replaced). True if one was queued.
    Only backends that can defer a task have one (the test suite's immediate backend has not)."""
    from django.tasks import task_backends

    from judging.tasks import run_watch_task  # tasks import the engine, which imports this module

    if not task_backends[run_watch_task.backend].supports_defer:
        return False
    now = timezone.now()
    due = now + watchdog_delay()
    claimed = (
        JudgeRun.objects.filter(pk=run_id, status=JudgeRun.Status.RUNNING)
        .filter(Q(watchdog_at__isnull=True) | Q(watchdog_at__lt=now))
        .update(watchdog_at=due)
    )
    if claimed:
        run_watch_task.using(run_after=due).enqueue(run_id)
    return bool(claimed)


def run_watch(*, run_id: int) -> int:
    """The run's watchdog, run by any worker: shards whose worker died (stale heartbeat, or a
    process of this machine that is gone) go back to the queue with a task each, so the run
    goes on with no one having to resume it; a run whose last worker died between its last
    judgment and closing the run is closed. Looks again later while the run is running.
    Returns how many shards were taken back."""
    JudgeRun.objects.filter(pk=run_id).update(watchdog_at=None)
    run = JudgeRun.objects.filter(pk=run_id).first()
    if run is None or run.status != JudgeRun.Status.RUNNING:
        return 0
    with transaction.atomic():
        now = timezone.now()
        locked = JudgeShard.objects.select_for_update(skip_locked=True).filter(pk__in=_abandoned_shard_ids(run, now))
        taken_back = [shard.pk for shard in locked if _abandoned(shard, now)]
        JudgeShard.objects.filter(pk__in=taken_back).update(status=JudgeShard.Status.QUEUED, in_flight=0, task_id="")
    _shard_tasks_enqueue(taken_back)
    if not run_close_if_idle(run=run):
        run_watch_schedule(run_id=run_id)
    return len(taken_back)


def _take(shard: JudgeShard, worker_id: str, now) -> None:
    shard.status = JudgeShard.Status.RUNNING
    shard.attempts += 1
    shard.worker_id = worker_id[:100]
    shard.heartbeat_at = now
    shard.started_at = now
    shard.error = ""
    shard.save(update_fields=["status", "attempts", "worker_id", "heartbeat_at", "started_at", "error"])


def _open_run(run_id: int) -> None:
    JudgeRun.objects.filter(pk=run_id).exclude(status__in=[JudgeRun.Status.CANCELLED, JudgeRun.Status.RUNNING]).update(
        status=JudgeRun.Status.RUNNING, finished_at=None, error=""
    )


@transaction.atomic
def shard_claim(*, shard_id: int, worker_id: str) -> bool:
    """Take a shard for this worker: a queued one, or a running one whose worker died (its
    heartbeat is stale, or its process on this machine is gone).

    Two workers racing for one shard: the row lock lets exactly one through.
    """
    shard = JudgeShard.objects.select_for_update(skip_locked=True).filter(pk=shard_id).select_related("run").first()
    if shard is None:
        return False
    now = timezone.now()
    if shard.status != JudgeShard.Status.QUEUED and not _abandoned(shard, now):
        return False
    if shard.run.status == JudgeRun.Status.CANCELLED:
        shard.status = JudgeShard.Status.CANCELLED
        shard.save(update_fields=["status"])
        return False
    if shard.run.status == JudgeRun.Status.FAILED and shard.run.error:
        # The run was stopped (every call failed the same way, or its endpoint is unusable): the
        # shard waits for `judge_resume`, which re-opens the run, rather than failing again.
        return False
    _take(shard, worker_id, now)
    if shard.run.status != JudgeRun.Status.RUNNING:
        _open_run(shard.run_id)
    return True


@transaction.atomic
def shard_claim_next(*, run_id: int, worker_id: str) -> JudgeShard | None:
    """Take the run's next shard for a worker whose calls run low: the first queued one, else
    one left by a worker that died (stale heartbeat, or a process of this machine that is gone).
    None when there is none, or when the run is no longer running."""
    if JudgeRun.objects.filter(pk=run_id).values_list("status", flat=True).first() != JudgeRun.Status.RUNNING:
        return None
    now = timezone.now()
    waiting = JudgeShard.objects.select_for_update(skip_locked=True).filter(run_id=run_id)
    shard = waiting.filter(status=JudgeShard.Status.QUEUED).order_by("index").first()
    if shard is None:
        others = waiting.filter(status=JudgeShard.Status.RUNNING).exclude(worker_id=worker_id[:100]).order_by("index")
        shard = next((candidate for candidate in others if _abandoned(candidate, now)), None)
    if shard is None:
        return None
    _take(shard, worker_id, now)
    return shard


@transaction.atomic
def shard_finish(*, shard_id: int, status: str, error: str = "") -> None:
    """Close a shard; when it was the last one open, close the run (`run_close`)."""
    JudgeShard.objects.filter(pk=shard_id).update(
        status=status, error=error[:300], in_flight=0, finished_at=timezone.now(), heartbeat_at=timezone.now()
    )
    run_id = JudgeShard.objects.values_list("run_id", flat=True).get(pk=shard_id)
    run = JudgeRun.objects.select_for_update().get(pk=run_id)
    if run.status == JudgeRun.Status.CANCELLED or (run.status == JudgeRun.Status.FAILED and run.error):
        return
    open_shards = run.shards.exclude(
        status__in=[JudgeShard.Status.DONE, JudgeShard.Status.FAILED, JudgeShard.Status.CANCELLED]
    )
    if open_shards.exists():
        return
    run_close(run=run)


def run_close(*, run: JudgeRun) -> None:
    """Every shard is closed: recount, and call the run finished only if every unit has a
    result; otherwise it failed, with a summary of what is missing and how to continue."""
    counts = run_counters_refresh(run=run)
    missing = max(0, run.total - counts["replied"])
    failed_shards = run.shards.filter(status=JudgeShard.Status.FAILED).count()
    if counts["call_failures"] or missing or failed_shards:
        run.status = JudgeRun.Status.FAILED
        context = run.judgments.filter(call_error_kind="context_length").count()
        parts = [f"{missing} of {run.total} judgments have no result"]
        if counts["call_failures"]:
            too_long = f"{context} {'prompt exceeds' if context == 1 else 'prompts exceed'} the judge's context length"
            parts.append(f"{counts['call_failures']} calls failed" + (f" ({too_long})" if context else ""))
        if failed_shards:
            parts.append(f"{failed_shards} shards failed")
        run.error = "; ".join(parts) + f"; 'judge_resume {run.pk}' sends what is missing again"
        # _drop_failed_calls keeps those: the same request would fail the same way.
        run.error += (
            ", and a prompt over the context length only with a smaller --max-tokens or once the endpoint changes."
            if context
            else "."
        )
    else:
        run.status = JudgeRun.Status.FINISHED
        run.error = ""
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "finished_at", "error"])
    from judging.figures import run_figures_schedule  # figures read selectors, which read this module

    run_figures_schedule(run=run)


@transaction.atomic
def run_close_if_idle(*, run: JudgeRun) -> bool:
    """Close a running run that has no open shard left (nothing was left to claim); True if closed."""
    run = JudgeRun.objects.select_for_update().get(pk=run.pk)
    if run.status != JudgeRun.Status.RUNNING:
        return False
    if run.shards.filter(status__in=[JudgeShard.Status.QUEUED, JudgeShard.Status.RUNNING]).exists():
        return False
    run_close(run=run)
    return True


def shards_release(*, shard_ids: list[int]) -> int:
    """Give shards back to the queue (a worker asked to shut down): nothing they hold is lost,
    and the next worker sends only what they miss. Returns how many were released."""
    return JudgeShard.objects.filter(pk__in=shard_ids, status=JudgeShard.Status.RUNNING).update(
        status=JudgeShard.Status.QUEUED, in_flight=0, task_id=""
    )


def shard_heartbeat(*, shard_id: int, in_flight: int) -> str:
    """Record that the shard is alive; returns the run's status so a cancel is noticed."""
    JudgeShard.objects.filter(pk=shard_id).update(heartbeat_at=timezone.now(), in_flight=in_flight)
    return JudgeRun.objects.filter(shards__pk=shard_id).values_list("status", flat=True).first() or ""


def run_worker_beat(
    *,
    run_id: int,
    worker_id: str,
    shard_ids: list[int],
    window: int,
    ceiling: int,
    in_flight: int,
    overloads: int,
    rate: float,
) -> tuple[str, int, int, int]:
    """A worker holding shards of a run says it is alive, with its window; returns the run's
    status, its concurrency (`judge_resume` may change it) and (live workers, this worker's
    place among them) to share it."""
    now = timezone.now()
    if shard_ids:
        JudgeShard.objects.filter(pk__in=shard_ids, status=JudgeShard.Status.RUNNING).update(
            heartbeat_at=now, in_flight=in_flight // max(1, len(shard_ids))
        )
    RunWorker.objects.update_or_create(
        run_id=run_id,
        worker_id=worker_id[:100],
        defaults={
            "window": window,
            "ceiling": ceiling,
            "in_flight": in_flight,
            "overloads": overloads,
            "rate": rate,
            "heartbeat_at": now,
        },
    )
    status, concurrency = JudgeRun.objects.values_list("status", "concurrency").get(pk=run_id)
    fresh = RunWorker.objects.filter(run_id=run_id, heartbeat_at__gte=now - stale_after()).values_list(
        "worker_id", flat=True
    )
    # A worker of this machine that was killed takes no share while its row is still fresh.
    gone = [name for name in fresh if worker_is_gone(name)]
    if gone:
        RunWorker.objects.filter(run_id=run_id, worker_id__in=gone).delete()
    live = sorted(set(fresh) - set(gone))
    place = live.index(worker_id[:100]) if worker_id[:100] in live else len(live)
    return status, concurrency, max(1, len(live)), place


def run_worker_leave(*, run_id: int, worker_id: str) -> None:
    """The worker holds nothing of the run any more."""
    RunWorker.objects.filter(run_id=run_id, worker_id=worker_id[:100]).delete()


def concurrency_share(total: int, workers: int, place: int) -> int:
    """This worker's part of the run's concurrency: an even split, the remainder to the first."""
    workers = max(1, workers)
    return max(1, total // workers + (1 if place < total % workers else 0))


def run_counters_add(*, run_id: int, judgments: list[Judgment]) -> None:
    """Add a batch of new judgments to the run's running counts (one UPDATE)."""
    if not judgments:
        return
    replied = [j for j in judgments if not j.call_error]
    JudgeRun.objects.filter(pk=run_id).update(
        replied=F("replied") + len(replied),
        parse_failures=F("parse_failures") + sum(1 for j in replied if j.parse_error and j.finish_reason != "length"),
        call_failures=F("call_failures") + (len(judgments) - len(replied)),
        cut_off=F("cut_off") + sum(1 for j in replied if j.finish_reason == "length"),
        cached_replies=F("cached_replies") + sum(1 for j in judgments if j.cached),
        prompt_tokens=F("prompt_tokens") + sum(j.prompt_tokens or 0 for j in replied if not j.cached),
        completion_tokens=F("completion_tokens") + sum(j.completion_tokens or 0 for j in replied if not j.cached),
    )


def run_counters_refresh(*, run: JudgeRun) -> dict:
    """Recount the run's judgments into its running counts (after a resume, a close, a re-parse)."""
    totals = run.judgments.aggregate(
        replied=Count("pk", filter=Q(call_error="")),
        parse_failures=Count("pk", filter=Q(call_error="") & ~Q(parse_error="") & ~Q(finish_reason="length")),
        call_failures=Count("pk", filter=~Q(call_error="")),
        cut_off=Count("pk", filter=Q(call_error="", finish_reason="length")),
        cached_replies=Count("pk", filter=Q(cached=True)),
        prompt_tokens=Coalesce(Sum("prompt_tokens", filter=Q(cached=False)), 0),
        completion_tokens=Coalesce(Sum("completion_tokens", filter=Q(cached=False)), 0),
    )
    JudgeRun.objects.filter(pk=run.pk).update(**totals)
    for key, value in totals.items():
        setattr(run, key, value)
    return totals


CANCELLABLE = (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING)


@transaction.atomic
def run_cancel(*, run: JudgeRun, actor: AbstractBaseUser | None = None) -> None:
    """Stop a pending or running run: queued shards never start, running shards stop sending
    after their next heartbeat. A finished, failed or cancelled run keeps its status (RunError).
    The audit log records who cancelled it."""
    locked = JudgeRun.objects.select_for_update().get(pk=run.pk)
    if locked.status not in CANCELLABLE:
        raise RunError(
            _("Only a pending or running run can be cancelled; run %(id)s is %(status)s.")
            % {"id": locked.pk, "status": str(locked.get_status_display()).lower()}
        )
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.CANCELLED, finished_at=timezone.now())
    run.shards.filter(status=JudgeShard.Status.QUEUED).update(status=JudgeShard.Status.CANCELLED)
    audit_record(actor=actor, action=AuditAction.RUN_CANCELLED, target=f"run:{run.pk}", details={"was": locked.status})
    run.refresh_from_db()


@transaction.atomic
def run_stop(*, run_id: int, error: str) -> None:
    """Stop a run that cannot go on as it is (every call fails the same way): the other workers
    stop at their next tick, and `error` tells the researcher what to fix."""
    JudgeRun.objects.filter(pk=run_id).exclude(status=JudgeRun.Status.CANCELLED).update(
        status=JudgeRun.Status.FAILED, finished_at=timezone.now(), error=error[:500]
    )


def run_resume(
    *,
    run: JudgeRun,
    force: bool = False,
    enqueue: bool = True,
    concurrency: int | str | None = None,
    timeout_seconds: float | None = None,
    max_tokens: int | None = None,
) -> int:
    """Re-queue what a crash, a failure, a stop or a cancel left; returns how many shards were
    re-queued.

    A RUNNING shard counts as abandoned only when its worker died: its heartbeat is stale, or
    its process on this machine is gone (or with `force`).
    Finished judgments stay: the shard sends only what is missing, and the response cache
    makes a re-sent identical prompt free. Failed calls are sent again, except prompts that
    exceed the judge's context length on the same endpoint, model and max_tokens.
    `concurrency` ("auto" or a number), `timeout_seconds` and `max_tokens` change the run from
    here on; a new `max_tokens` also sends again the replies the old one cut off. With
    `enqueue` (the page, the API and `judge_resume`), a task is queued for every queued shard
    once the re-queue is committed; `judge_resume --inline` runs the shards itself instead.
    """
    count = _run_requeue(
        run=run, force=force, concurrency=concurrency, timeout_seconds=timeout_seconds, max_tokens=max_tokens
    )
    run.refresh_from_db()
    if enqueue:
        run_enqueue(run=run)
    return count


@transaction.atomic
def _run_requeue(
    *,
    run: JudgeRun,
    force: bool,
    concurrency: int | str | None = None,
    timeout_seconds: float | None = None,
    max_tokens: int | None = None,
) -> int:
    run = JudgeRun.objects.select_for_update(of=("self",)).select_related("endpoint").get(pk=run.pk)
    changed = []
    if concurrency is not None:
        run.concurrency, run.concurrency_auto = concurrency_resolve(concurrency, endpoint=run.endpoint)
        changed += ["concurrency", "concurrency_auto"]
    if timeout_seconds is not None:
        if timeout_seconds <= 0:
            raise RunError("The timeout must be more than 0 seconds.")
        run.timeout_seconds = timeout_seconds
        changed.append("timeout_seconds")
    if max_tokens is not None:
        if max_tokens < 1:
            raise RunError("max_tokens must be at least 1.")
        if max_tokens != run.max_tokens:
            run.judgments.filter(finish_reason="length").delete()
        run.max_tokens = max_tokens
        changed.append("max_tokens")
    _drop_failed_calls(run)
    # Right after a crash the dead worker's heartbeat is still fresh: a process of this machine
    # that is gone is known dead at once, any other holder once its heartbeat is stale.
    abandoned = Q(pk__in=_abandoned_shard_ids(run, timezone.now()))
    if force:
        abandoned = Q(status=JudgeShard.Status.RUNNING)
    retry = Q(status__in=[JudgeShard.Status.FAILED, JudgeShard.Status.CANCELLED]) | abandoned
    # A finished shard with units that have no judgment (failed calls dropped above, cut-off
    # replies of an old max_tokens) gets another go too.
    retry |= Q(status=JudgeShard.Status.DONE, pk__in=_shards_missing_units(run))
    count = run.shards.filter(retry).update(status=JudgeShard.Status.QUEUED, in_flight=0, task_id="")
    if count or run.shards.filter(status=JudgeShard.Status.QUEUED).exists():
        run.status = JudgeRun.Status.RUNNING
        run.finished_at = None
        run.error = ""
        changed += ["status", "finished_at", "error"]
    if changed:
        run.save(update_fields=sorted(set(changed)))
    run_counters_refresh(run=run)
    return count


def _drop_failed_calls(run: JudgeRun) -> None:
    """Failed calls have no reply worth keeping: drop them so they are sent again. A prompt
    that exceeds the context length stays failed while the endpoint, the model and max_tokens
    are the same."""
    from judging.execution import endpoint_for_run  # the run's endpoint, as its shards will call it

    failed = run.judgments.exclude(call_error="")
    try:
        endpoint = endpoint_for_run(run)
        max_tokens = max_tokens_for(CallKind.JUDGING, endpoint=endpoint, override=run.max_tokens)
        signature = endpoint_signature(endpoint, run.judge_model, max_tokens)
    except EndpointError:
        signature = None  # the endpoint is gone: nothing can be sent anyway; keep what is known
    if signature is not None:
        failed.exclude(call_error_kind="context_length", error_endpoint=signature).delete()
    else:
        failed.exclude(call_error_kind="context_length").delete()


def _shards_missing_units(run: JudgeRun) -> list[int]:
    done = set(run.judgments.values_list("item_id", "model_id", "order"))
    return [
        shard.pk
        for shard in run.shards.filter(status=JudgeShard.Status.DONE).only("pk", "units")
        if any(tuple(unit) not in done for unit in shard.units)
    ]


def judgment_fields_from_reply(
    *, mode: str, text: str, candidate_side: str, criteria: list[str], template: str, answer: str
) -> dict:
    """Parse one reply into Judgment fields. Pure apart from the imports; used at save and re-parse."""
    if mode == JudgeMode.PAIRWISE:
        parsed = parse_pairwise(text)
        if parsed.winner is None:
            return {
                "outcome": Judgment.Outcome.ERROR,
                "parse_error": parsed.error[:300],
                "final_score": None,
                "scores": {},
            }
        outcome = Judgment.Outcome.WIN if parsed.winner == candidate_side else Judgment.Outcome.LOSE
        return {"outcome": outcome, "parse_error": "", "final_score": None, "scores": {}}
    parsed = parse_pointwise(text, criteria=criteria, template=template, answer=answer)
    return {
        "outcome": "",
        "parse_error": parsed.error[:300] if not parsed.ok else "",
        "final_score": parsed.final_score if parsed.ok else None,
        "scores": parsed.scores,
    }


@transaction.atomic
def run_reparse(*, run: JudgeRun) -> int:
    """Parse the stored replies again (e.g. after a parser fix) without a single new call.

    Returns how many verdicts (final score, outcome or parse failure) changed."""
    from judging.execution import build_prompt  # the same prompt the judge saw

    changed = 0
    # Replies about a withdrawn participant's question were erased: their verdicts stay as they were.
    # A reply cut off by max_tokens is never scored, however it parses.
    judgments = (
        run.judgments.filter(call_error="", item__withdrawn_at__isnull=True)
        .exclude(finish_reason="length")
        .select_related("item", "template")
    )
    answers = {
        (a.item_id, a.model_id): a.text
        for a in Answer.objects.filter(item__dataset=run.dataset).only("item_id", "model_id", "text")
    }
    for judgment in judgments:
        answer = answers.get((judgment.item_id, judgment.model_id), "")
        reference = answers.get((judgment.item_id, run.reference_model_id), "") if run.reference_model_id else ""
        _prompt, side = build_prompt(run, judgment.template, judgment.item, answer, reference, judgment.order)
        fields = judgment_fields_from_reply(
            mode=run.mode,
            text=judgment.raw_text,
            candidate_side=side,
            criteria=criteria_for_template(judgment.template.name) if judgment.template else [],
            template=judgment.template.text if judgment.template else "",
            answer=answer,
        )
        verdict_changed = any(
            getattr(judgment, key) != fields[key] for key in ("final_score", "outcome", "parse_error")
        )
        if verdict_changed or judgment.scores != fields["scores"]:
            for key, value in fields.items():
                setattr(judgment, key, value)
            judgment.save(update_fields=list(fields))
        changed += verdict_changed
    run_counters_refresh(run=run)
    if changed:
        from judging.figures import run_figures_schedule  # figures read selectors, which read this module

        transaction.on_commit(lambda: run_figures_schedule(run=run))
    return changed


def difficulty_filter_from_run(
    *, run: JudgeRun, percent: int = 50, created_by: AbstractBaseUser | None = None
) -> DifficultyFilter:
    """AlignBench 2.2's difficulty filter from a judge run over filter models: each item's mean
    final score (parse failures left out) goes to curation, which drops the easiest percent."""
    rows = (
        run.judgments.filter(final_score__isnull=False, model__is_probe=False)
        .values("item__external_id")
        .annotate(mean=Avg("final_score"), n=Count("id"))
    )
    scores = {row["item__external_id"]: (row["mean"], row["n"]) for row in rows}
    return difficulty_filter_apply(
        dataset=run.dataset, scores=scores, percent=percent, run_number=run.pk, created_by=created_by
    )


@transaction.atomic
def candidate_model_describe(*, name: str, provider: str | None = None, family: str | None = None) -> CandidateModel:
    """Record who serves a model and its family (None leaves a field as it is), creating the model
    when it is new: a judge named like it is then known to share them (self-preference)."""
    for label, value in (("provider", provider), ("family", family)):
        if value is not None and len(value.strip()) > 64:
            raise RunError(f"The {label} is at most 64 characters.")
    if not name.strip() or len(name.strip()) > 128:
        raise RunError("Name the model (1 to 128 characters).")
    model, _created = CandidateModel.objects.get_or_create(name=name.strip())
    if provider is not None:
        model.provider = provider.strip()
    if family is not None:
        model.family = family.strip()
    model.save(update_fields=["provider", "family"])
    return model


@transaction.atomic
def probe_answers_ensure(*, dataset: Dataset) -> list[CandidateModel]:
    """The injection probe's pseudo-candidates (judging/probe.py), each with its constant answer
    on every item of the dataset in the item's language; returns the probe models.

    A real model already named like a probe is refused rather than taken over."""
    taken = list(
        CandidateModel.objects.filter(name__in=[a.model_name for a in ATTACKS], is_probe=False).values_list(
            "name", flat=True
        )
    )
    if taken:
        raise RunError(
            _("The probe's model names are taken by real models: %(names)s.") % {"names": ", ".join(sorted(taken))}
        )
    items = list(dataset.items.order_by("id").values_list("id", "language"))
    probes = []
    for attack in ATTACKS:
        probe, _created = CandidateModel.objects.get_or_create(name=attack.model_name, defaults={"is_probe": True})
        probes.append(probe)
        for language in {language for _id, language in items}:
            # The constant is the attack as Userbench ships it now; an older wording is replaced.
            Answer.objects.filter(item__dataset=dataset, item__language=language, model=probe).exclude(
                text=attack.text_for(language)
            ).update(text=attack.text_for(language))
        Answer.objects.bulk_create(
            [
                Answer(
                    item_id=item_id,
                    model=probe,
                    text=attack.text_for(language),
                    origin=Answer.Origin.PROBE,
                    parameters={"attack": attack.key},
                )
                for item_id, language in items
            ],
            ignore_conflicts=True,
        )
    return probes
