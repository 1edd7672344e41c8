"""What a judge run would do, computed before anything is written: its units of work (item,
model, order), the template versions it would use, and the tokens it would send and receive.
`/runs/new/` shows it before a run starts; `run_create` writes the same plan with its shards."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.db.models.functions import Length
from django.urls import reverse
from django.utils.translation import gettext as _

from curation.models import Item
from judging.errors import RunError
from judging.models import Answer, CandidateModel, JudgeMode, JudgeRun, JudgeTemplate
from judging.prompts.estimate import cost_estimate, text_language, tokens_estimate
from judging.prompts.templates import item_template_name, latest_templates, template_family, templates_ensure_defaults
from judging.runs.spec import RunSpec

# A judge's reply length when the run sets no max_tokens: explanations per criterion, or a ranking.
TYPICAL_REPLY_TOKENS: dict[str, int] = {JudgeMode.POINTWISE: 400, JudgeMode.PAIRWISE: 60}


def pair_order(seed: int, item_id: int, model_id: int) -> int:
    """Which side the candidate takes (0: first, 1: second), reproducible from the run's seed."""
    return random.Random(f"{seed}:{item_id}:{model_id}").randrange(2)


@dataclass(frozen=True)
class RunPlan:
    """What a run would do, computed before anything is written: its units of work (item, model,
    order), the templates it would use, and an estimate of the tokens it would send and receive."""

    candidates: tuple[CandidateModel, ...]
    units: tuple[tuple[int, int, int], ...]
    templates: dict[str, JudgeTemplate]
    seed: int
    shard_size: int
    prompt_tokens: int
    completion_tokens: int
    family: str = ""
    # External ids of the items left out because their template judges against a reference they lack.
    excluded_without_reference: tuple[str, ...] = ()
    # Answers cut off at max_tokens the run leaves out (the spec's include_cut_off unset).
    cut_off_left_out: int = 0

    @property
    def calls(self) -> int:
        return len(self.units)

    @property
    def shards(self) -> int:
        return -(-len(self.units) // self.shard_size)

    def cost(self, *, input_price, output_price) -> Decimal | None:
        """The estimate priced per million tokens; None when the input price is unknown."""
        return cost_estimate(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            input_price=input_price,
            output_price=output_price,
        )


def _answers(spec: RunSpec):
    """The answers a run of `spec` judges: the versions it pins (a re-run), else the current ones."""
    if spec.answer_sets is None:
        return Answer.objects.all()
    return Answer.all_versions.filter(answer_set__in=spec.answer_sets)


def run_plan(*, spec: RunSpec, probes: Sequence[CandidateModel] = ()) -> RunPlan:
    """Everything run_create checks and computes, without writing: the units of work, the latest
    template versions they need (built-in ones are made if missing), and the token estimate.

    `probes` are the injection probe's pseudo-candidates (judging/answers/probe.py), judged like the
    candidates and reported apart; the spec's `templates` pin exact template versions (a
    re-run); a `system_prompt` is sent with every call, so it counts in the estimate.
    Raises RunError with a message a researcher can act on.
    """
    dataset, mode, reference_model = spec.dataset, spec.mode, spec.reference_model
    candidates = list(spec.candidates)
    both_orders, shard_size, max_tokens = spec.both_orders, spec.shard_size, spec.max_tokens
    pinned, system_prompt = spec.templates, spec.system_prompt
    if mode == JudgeMode.PAIRWISE:
        assert reference_model is not None  # RunSpec refuses a pairwise run without one
        candidates = [c for c in candidates if c.pk != reference_model.pk] or candidates
    seed = random.randrange(2**31) if spec.seed is None else spec.seed

    judged = _answers(spec).filter(
        item__dataset=dataset, model__in=[*candidates, *probes, *([reference_model] if reference_model else [])]
    )
    # A reply cut off at max_tokens is no complete answer: judged only when asked for.
    cut_off_left_out = 0 if spec.include_cut_off else judged.filter(cut_off=True).count()
    if not spec.include_cut_off:
        judged = judged.filter(cut_off=False)
    answer_chars = {
        (row["item_id"], row["model_id"]): row["chars"]
        for row in judged.annotate(chars=Length("text")).values("item_id", "model_id", "chars")
    }
    items = list(
        Item.objects.filter(dataset=dataset)
        .order_by("id")
        .annotate(question_chars=Length("question"), reference_chars=Length("reference"))
        .values(
            "id", "external_id", "intent", "category", "subcategory", "language", "question_chars", "reference_chars"
        )
    )
    if not items:
        raise RunError(_("Dataset “%(name)s” has no items.") % {"name": dataset.name})
    units: list[tuple[int, int, int]] = []
    unit_names: list[str] = []
    unit_chars: list[tuple[int, str]] = []
    family = spec.template_set or template_family(dataset, mode)
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
                assert reference_model is not None  # RunSpec refuses a pairwise run without one
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
        if cut_off_left_out:
            raise RunError(
                _(
                    "The answers of %(models)s on dataset “%(name)s” were cut off at max_tokens (%(count)d), and a "
                    "run leaves cut-off answers out: generate them again with a larger max_tokens (--max-tokens, "
                    "or the generation form), or judge them as they are (--include-cut-off, or “Include answers cut "
                    "off at max_tokens” on the run's form)."
                )
                % {"models": who, "name": dataset.name, "count": cut_off_left_out},
                parameter="include_cut_off",
            )
        raise RunError(
            _("None of %(models)s has answers on dataset “%(name)s”: import or generate them first.")
            % {"models": who, "name": dataset.name}
        )

    names = set(unit_names)
    templates: dict[str, JudgeTemplate]
    if pinned is not None:
        chosen = {template.name: template for template in pinned}
        missing = sorted(names - set(chosen))
        if missing:
            raise RunError(_("The templates given do not include %(names)s.") % {"names": ", ".join(missing)})
        templates = {name: chosen[name] for name in names}
    else:
        templates = latest_templates(names, dataset.workspace_id)
        if set(templates) != names:
            templates_ensure_defaults()
            templates = latest_templates(names, dataset.workspace_id)
    missing = sorted(names - set(templates))
    if missing:
        raise RunError(_("No judge template named %(names)s.") % {"names": ", ".join(missing)})
    excluded: tuple[str, ...] = ()
    if reference_model is None:
        units, unit_names, unit_chars, excluded = _without_missing_references(
            spec, items, templates, units, unit_names, unit_chars
        )
        if not units:
            raise RunError(_("No item is left to judge once those without a reference answer are excluded."))
        names = set(unit_names)
        templates = {name: templates[name] for name in names}
    template_tokens = {name: tokens_estimate(len(t.text), t.language) for name, t in templates.items()}
    system_tokens = tokens_estimate(len(system_prompt), text_language(system_prompt))
    prompt_tokens = sum(
        template_tokens[name] + tokens_estimate(chars, language) + (system_tokens if system_prompt else 0)
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
        excluded_without_reference=excluded,
        cut_off_left_out=cut_off_left_out,
    )


def _without_missing_references(spec: RunSpec, items, templates, units, unit_names, unit_chars):
    """The units left once items whose template judges against `{reference}` but that have none
    are taken out, and those items' external ids. Without the spec's `exclude_missing_references`
    such items refuse the run (RunError saying how many, and where references are drafted)."""
    uses_reference = {name for name, template in templates.items() if "{reference}" in template.text}
    empty = {item["id"]: item["external_id"] for item in items if not item["reference_chars"]}
    missing = {unit[0] for unit, name in zip(units, unit_names) if name in uses_reference and unit[0] in empty}
    if not missing:
        return units, unit_names, unit_chars, ()
    if not spec.exclude_missing_references:
        working = spec.dataset.frozen_from_id or spec.dataset.pk
        raise RunError(
            _(
                "%(missing)d of the %(total)d items judged have no reference answer, and this run's templates "
                "judge against one ({reference}): the judge would compare answers with nothing. Draft the "
                "references first (%(url)s), or exclude these items explicitly."
            )
            % {
                "missing": len(missing),
                "total": len({unit[0] for unit in units}),
                "url": reverse("curation:review-dataset", args=[working]) + "#background-jobs",
            },
            parameter="exclude_missing_references",
        )
    kept = [k for k, unit in enumerate(units) if unit[0] not in missing]
    return (
        [units[k] for k in kept],
        [unit_names[k] for k in kept],
        [unit_chars[k] for k in kept],
        tuple(sorted(empty[item] for item in missing)),
    )
