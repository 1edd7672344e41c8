"""Writes of the judging app: templates, runs and their shards, cancel, resume, re-parse.

The async engine that executes a shard lives in `judging/execution.py`; generation of
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
from django.db.models import Avg, Count, Q
from django.db.models.functions import Length
from django.utils import timezone
from django.utils.translation import gettext as _

from core.audit import AuditAction, audit_record
from core.errors import UserbenchError
from curation.datasets.import_checks import unstorable
from curation.datasets.services import difficulty_filter_apply
from curation.models import Dataset, DifficultyFilter, Item
from judging.manifest import run_manifest_build
from judging.models import Answer, CandidateModel, JudgeMode, JudgeRun, JudgeShard, JudgeTemplate, Judgment
from judging.parsing import parse_pairwise, parse_pointwise
from judging.probe import ATTACKS
from judging.prompts import (
    TEMPLATE_SETS,
    criteria_for_template,
    default_templates,
    template_name_for,
    template_problems,
)
from llm.models import Endpoint

DEFAULT_SHARD_SIZE = 500


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
    concurrency: int = 16,
    both_orders: bool = False,
    seed: int | None = None,
    shard_size: int = DEFAULT_SHARD_SIZE,
    max_tokens: int | None = None,
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
    Raises RunError with a message a researcher can act on.
    """
    if mode not in JudgeMode.values:
        raise RunError(f"Unknown mode {mode!r}; use pointwise or pairwise.")
    if not judge_model:
        raise RunError("Name the judge model (--judge-model).")
    if concurrency < 1:
        raise RunError("Concurrency must be at least 1.")
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
    for item in items:
        name = item_template_name(
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
    concurrency: int = 16,
    both_orders: bool = False,
    seed: int | None = None,
    shard_size: int = DEFAULT_SHARD_SIZE,
    temperature: float | None = 0.0,
    max_tokens: int | None = None,
    system_prompt: str = "",
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
        concurrency=concurrency,
        both_orders=both_orders,
        seed=seed,
        shard_size=shard_size,
        max_tokens=max_tokens,
        template_set=template_set,
        probes=probes,
        templates=templates,
        system_prompt=system_prompt,
    )
    family = plan.family
    run = JudgeRun.objects.create(
        dataset=dataset,
        mode=mode,
        judge_model=judge_model,
        endpoint=endpoint,
        reference_model=reference_model,
        both_orders=both_orders,
        seed=plan.seed,
        concurrency=concurrency,
        temperature=temperature,
        max_tokens=max_tokens,
        system_prompt=system_prompt,
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


def run_enqueue(*, run: JudgeRun) -> int:
    """Queue a task on the `judging` queue for each queued shard; returns how many were queued.

    Call it after the shards are committed: a worker may pick a task up at once.
    """
    from judging.tasks import judge_shard_task

    if run.status in (JudgeRun.Status.PENDING, JudgeRun.Status.FAILED):
        JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING)
        run.status = JudgeRun.Status.RUNNING
    queued = 0
    for shard_id in list(run.shards.filter(status=JudgeShard.Status.QUEUED).values_list("pk", flat=True)):
        result = judge_shard_task.enqueue(shard_id)
        JudgeShard.objects.filter(pk=shard_id, task_id="").update(task_id=str(result.id)[:64])
        queued += 1
    return queued


@transaction.atomic
def shard_claim(*, shard_id: int, worker_id: str) -> bool:
    """Take a shard for this worker: a queued one, or a running one whose heartbeat is stale.

    Two workers racing for one shard: the row lock lets exactly one through.
    """
    shard = JudgeShard.objects.select_for_update(skip_locked=True).filter(pk=shard_id).select_related("run").first()
    if shard is None:
        return False
    now = timezone.now()
    stale = shard.status == JudgeShard.Status.RUNNING and (
        shard.heartbeat_at is None or shard.heartbeat_at < now - stale_after()
    )
    if shard.status != JudgeShard.Status.QUEUED and not stale:
        return False
    if shard.run.status == JudgeRun.Status.CANCELLED:
        shard.status = JudgeShard.Status.CANCELLED
        shard.save(update_fields=["status"])
        return False
    shard.status = JudgeShard.Status.RUNNING
    shard.attempts += 1
    shard.worker_id = worker_id[:100]
    shard.heartbeat_at = now
    shard.started_at = now
    shard.error = ""
    shard.save(update_fields=["status", "attempts", "worker_id", "heartbeat_at", "started_at", "error"])
    if shard.run.status != JudgeRun.Status.RUNNING:
        JudgeRun.objects.filter(pk=shard.run_id).exclude(status=JudgeRun.Status.CANCELLED).update(
            status=JudgeRun.Status.RUNNING, finished_at=None
        )
    return True


@transaction.atomic
def shard_finish(*, shard_id: int, status: str, error: str = "") -> None:
    """Close a shard; when it was the last one open, close the run."""
    JudgeShard.objects.filter(pk=shard_id).update(
        status=status, error=error[:300], in_flight=0, finished_at=timezone.now(), heartbeat_at=timezone.now()
    )
    run_id = JudgeShard.objects.values_list("run_id", flat=True).get(pk=shard_id)
    run = JudgeRun.objects.select_for_update().get(pk=run_id)
    if run.status == JudgeRun.Status.CANCELLED:
        return
    open_shards = run.shards.exclude(
        status__in=[JudgeShard.Status.DONE, JudgeShard.Status.FAILED, JudgeShard.Status.CANCELLED]
    )
    if open_shards.exists():
        return
    failed = run.shards.filter(status=JudgeShard.Status.FAILED).exists()
    run.status = JudgeRun.Status.FAILED if failed else JudgeRun.Status.FINISHED
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "finished_at"])


def shard_heartbeat(*, shard_id: int, in_flight: int) -> str:
    """Record that the shard is alive; returns the run's status so a cancel is noticed."""
    JudgeShard.objects.filter(pk=shard_id).update(heartbeat_at=timezone.now(), in_flight=in_flight)
    return JudgeRun.objects.filter(shards__pk=shard_id).values_list("status", flat=True).first() or ""


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


def run_resume(*, run: JudgeRun, force: bool = False, enqueue: bool = True) -> int:
    """Re-queue what a crash, a failure or a cancel left; returns how many shards were re-queued.

    A RUNNING shard counts as abandoned only when its heartbeat is stale (or with `force`).
    Finished judgments stay: the shard sends only what is missing, and the response cache
    makes a re-sent identical prompt free. With `enqueue` (the page, the API and
    `judge_resume`), a task is queued for every queued shard once the re-queue is committed;
    `judge_resume --inline` runs the shards itself instead.
    """
    count = _run_requeue(run=run, force=force)
    run.refresh_from_db()
    if enqueue:
        run_enqueue(run=run)
    return count


@transaction.atomic
def _run_requeue(*, run: JudgeRun, force: bool) -> int:
    run = JudgeRun.objects.select_for_update().get(pk=run.pk)
    cutoff = timezone.now() - stale_after()
    abandoned = Q(status=JudgeShard.Status.RUNNING) & (Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True))
    if force:
        abandoned = Q(status=JudgeShard.Status.RUNNING)
    retry = Q(status__in=[JudgeShard.Status.FAILED, JudgeShard.Status.CANCELLED]) | abandoned
    # A finished shard whose calls failed (not parse failures) gets another go too.
    retry |= Q(status=JudgeShard.Status.DONE, pk__in=_shards_with_call_errors(run))
    count = run.shards.filter(retry).update(status=JudgeShard.Status.QUEUED, in_flight=0, task_id="")
    if count or run.shards.filter(status=JudgeShard.Status.QUEUED).exists():
        run.status = JudgeRun.Status.RUNNING
        run.finished_at = None
        run.save(update_fields=["status", "finished_at"])
    return count


def _shards_with_call_errors(run: JudgeRun) -> list[int]:
    failed = set(run.judgments.exclude(call_error="").values_list("item_id", "model_id", "order"))
    if not failed:
        return []
    return [
        shard.pk
        for shard in run.shards.filter(status=JudgeShard.Status.DONE).only("pk", "units")
        if any(tuple(unit) in failed for unit in shard.units)
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
    judgments = run.judgments.filter(call_error="", item__withdrawn_at__isnull=True).select_related("item", "template")
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
