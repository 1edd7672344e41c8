"""Versions of a model's answers to a dataset (AnswerSet): which one is current, which ones a run
judged, and the two undo actions, replace and delete.

A replace or a delete never removes rows: the old version stops being current and stays for
the runs that judged it, whose pages, exports, manifests and re-runs read it (`run_answers`).
New work (runs, generations, pages) reads the current version through `Answer.objects`.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.db.models import Max, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from core.audit import AuditAction, audit_record
from core.errors import UserbenchError
from curation.models import Dataset, Item
from judging.models import Answer, AnswerSet, CandidateModel, JudgeRun


class AnswersNotFound(UserbenchError):
    """The model has no current answers on the dataset."""


def answer_set_current(*, dataset: Dataset | int, model: CandidateModel | int, create: bool = False, actor=None):
    """The current version of the model's answers on the dataset; with `create`, a new one (the
    next number) when there is none, else None."""
    dataset_id = getattr(dataset, "pk", dataset)
    model_id = getattr(model, "pk", model)
    found = AnswerSet.objects.filter(dataset_id=dataset_id, model_id=model_id, is_current=True).first()
    if found is not None or not create:
        return found
    last = AnswerSet.objects.filter(dataset_id=dataset_id, model_id=model_id).aggregate(last=Max("version"))["last"]
    return AnswerSet.objects.create(
        dataset_id=dataset_id,
        model_id=model_id,
        version=(last or 0) + 1,
        created_by=actor if getattr(actor, "is_authenticated", False) else None,
    )


def answers_give_current_set(answers: Iterable[Answer]) -> None:
    """Give each answer without a version the current one of its (dataset, model), made when
    there is none. Precondition: called inside the transaction that saves the answers."""
    pending = [answer for answer in answers if answer.answer_set_id is None]
    if not pending:
        return
    datasets = dict(Item.objects.filter(pk__in={a.item_id for a in pending}).values_list("id", "dataset_id"))
    sets: dict[tuple[int, int], AnswerSet] = {}
    for answer in pending:
        key = (datasets[answer.item_id], answer.model_id)
        if key not in sets:
            sets[key] = answer_set_current(dataset=key[0], model=key[1], create=True)
        answer.answer_set = sets[key]
        answer.is_current = sets[key].is_current


def _retire(answer_set: AnswerSet) -> None:
    answer_set.is_current = False
    answer_set.retired_at = timezone.now()
    answer_set.save(update_fields=["is_current", "retired_at"])
    Answer.all_versions.filter(answer_set=answer_set).update(is_current=False)


def _described(answer_set: AnswerSet | None) -> dict | None:
    if answer_set is None:
        return None
    return {"version": answer_set.version, "answers": Answer.all_versions.filter(answer_set=answer_set).count()}


@transaction.atomic
def answers_new_version(*, dataset: Dataset, model: CandidateModel, actor=None) -> tuple[AnswerSet, AnswerSet | None]:
    """Retire the current version (if any) and make the next one current: (new, retired).
    The caller fills the new version in the same transaction (judging/answers/imports.py)."""
    old = AnswerSet.objects.select_for_update().filter(dataset=dataset, model=model, is_current=True).first()
    if old is not None:
        _retire(old)
    return answer_set_current(dataset=dataset, model=model, create=True, actor=actor), old


def answers_replaced_audit(*, dataset: Dataset, new: AnswerSet, old: AnswerSet | None, actor) -> None:
    """The audit entry of a replace, with the version before and after."""
    audit_record(
        actor=actor,
        action=AuditAction.ANSWERS_REPLACED,
        target=f"dataset:{dataset.name}",
        details={"model": new.model.name, "before": _described(old), "after": _described(new)},
        workspace=dataset.workspace_id,
    )


@transaction.atomic
def answers_delete(*, dataset: Dataset, model_name: str, actor) -> AnswerSet:
    """Leave the model without current answers on the dataset. The version stays for the runs
    and campaigns that used it; a later upload makes the next version. Raises AnswersNotFound."""
    current = (
        AnswerSet.objects.select_for_update()
        .select_related("model")
        .filter(dataset=dataset, model__name=model_name.strip(), is_current=True)
        .first()
    )
    if current is None:
        raise AnswersNotFound(
            _("%(model)s has no answers on %(dataset)s.") % {"model": model_name.strip(), "dataset": dataset.name}
        )
    before = _described(current)
    _retire(current)
    audit_record(
        actor=actor,
        action=AuditAction.ANSWERS_DELETED,
        target=f"dataset:{dataset.name}",
        details={"model": current.model.name, "before": before, "after": None},
        workspace=dataset.workspace_id,
    )
    return current


def current_answer_sets(*, dataset: Dataset, models: Iterable[CandidateModel]) -> list[AnswerSet]:
    """The current versions of these models' answers on the dataset (models without none left out)."""
    return list(
        AnswerSet.objects.filter(dataset=dataset, model__in=list(models), is_current=True).select_related("model")
    )


def run_answers(run: JudgeRun) -> QuerySet[Answer]:
    """The answers the run judged: those of the versions it pinned when it was made."""
    return Answer.all_versions.filter(answer_set__runs=run)


def run_answer_versions(run: JudgeRun) -> dict[str, int]:
    """{model name: version} of the answers the run judged."""
    return dict(run.answer_sets.order_by("model__name").values_list("model__name", "version"))
