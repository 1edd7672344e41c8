"""Versions of a model's answers to a dataset (AnswerSet): which one is current, which ones a run
judged, and the undo actions: replace, delete, and restore (an earlier version made current again).

A replace, a delete or a restore never removes rows: the old version stops being current and stays
for the runs that judged it, whose pages, exports, manifests and re-runs read it (`run_answers`).
New work (runs, generations, pages) reads the current version through `Answer.objects`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from core.archiving import refuse_if_archived
from core.audit import AuditAction, audit_record
from core.errors import UserbenchError
from core.workspaces import in_workspace
from curation.models import Dataset
from judging.models import Answer, AnswerSet, CandidateModel, JudgeRun, answer_set_current_or_new


class AnswersNotFound(UserbenchError):
    """The model has no current answers on the dataset."""


class AnswerVersionRefused(UserbenchError):
    """A version that cannot be made current again; `field` names the input at fault."""

    def __init__(self, message, *, field: str = "version"):
        super().__init__(message)
        self.field = field


def answers_not_found(*, model_name: str, dataset: Dataset) -> AnswersNotFound:
    """The error for a model without current answers on the dataset, naming both."""
    return AnswersNotFound(
        _("%(model)s has no answers on %(dataset)s.") % {"model": model_name.strip(), "dataset": dataset.name}
    )


def answer_set_current(*, dataset: Dataset | int, model: CandidateModel | int, create: bool = False, actor=None):
    """The current version of the model's answers on the dataset; with `create`, a new one (the
    next number) when there is none, else None."""
    dataset_id = dataset.pk if isinstance(dataset, Dataset) else dataset
    model_id = model.pk if isinstance(model, CandidateModel) else model
    if create:
        return answer_set_current_or_new(
            dataset_id, model_id, created_by=actor if getattr(actor, "is_authenticated", False) else None
        )
    return AnswerSet.objects.filter(dataset_id=dataset_id, model_id=model_id, is_current=True).first()


def _retire(answer_set: AnswerSet, by: AnswerSet.RetiredBy) -> None:
    answer_set.is_current = False
    answer_set.retired_at = timezone.now()
    answer_set.retired_by = by
    answer_set.save(update_fields=["is_current", "retired_at", "retired_by"])
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
        _retire(old, AnswerSet.RetiredBy.REPLACED)
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
    and campaigns that used it; a later upload makes the next version. Raises AnswersNotFound, and
    ArchivedError on an archived dataset (read-only until restored)."""
    refuse_if_archived(dataset)
    current = (
        AnswerSet.objects.select_for_update()
        .select_related("model")
        .filter(dataset=dataset, model__name=model_name.strip(), is_current=True)
        .first()
    )
    if current is None:
        raise answers_not_found(model_name=model_name, dataset=dataset)
    before = _described(current)
    _retire(current, AnswerSet.RetiredBy.DELETED)
    audit_record(
        actor=actor,
        action=AuditAction.ANSWERS_DELETED,
        target=f"dataset:{dataset.name}",
        details={"model": current.model.name, "before": before, "after": None},
        workspace=dataset.workspace_id,
    )
    return current


@transaction.atomic
def answers_restore(*, dataset: Dataset, model_name: str, version: int, actor) -> AnswerSet:
    """Make an earlier version of the model's answers on the dataset current again. The version
    current now (if any) is retired as a replace retires it; nothing is deleted, and runs and
    campaigns keep the versions they pinned. ArchivedError on an archived dataset;
    AnswerVersionRefused for a model or version the dataset does not have, or one already current."""
    refuse_if_archived(dataset)
    names = {"model": model_name.strip(), "dataset": dataset.name, "version": version}
    model = in_workspace(CandidateModel.objects.all(), dataset.workspace_id).filter(name=names["model"]).first()
    # Every version locked, in order: the current one, as a replace locks it, and the one restored.
    versions = list(AnswerSet.objects.select_for_update().filter(dataset=dataset, model=model).order_by("version"))
    if model is None or not versions:
        raise AnswerVersionRefused(_("%(model)s has never had answers on %(dataset)s.") % names, field="model")
    target = next((found for found in versions if found.version == version), None)
    if target is None:
        raise AnswerVersionRefused(_("%(model)s has no version %(version)s of answers on %(dataset)s.") % names)
    if target.is_current:
        raise AnswerVersionRefused(_("Version %(version)s of %(model)s's answers is already current.") % names)
    current = next((found for found in versions if found.is_current), None)
    before = _described(current)
    try:
        with transaction.atomic():
            if current is not None:
                _retire(current, AnswerSet.RetiredBy.RESTORED)
            target.is_current, target.retired_at, target.retired_by = True, None, ""
            target.save(update_fields=["is_current", "retired_at", "retired_by"])
            Answer.all_versions.filter(answer_set=target).update(is_current=True)
    except IntegrityError:
        # An upload made a new version while none was current: the one-current constraints hold.
        raise AnswerVersionRefused(
            _("%(model)s's answers on %(dataset)s changed meanwhile; look again and retry.") % names
        ) from None
    audit_record(
        actor=actor,
        action=AuditAction.ANSWERS_RESTORED,
        target=f"dataset:{dataset.name}",
        details={"model": model.name, "before": before, "after": _described(target)},
        workspace=dataset.workspace_id,
    )
    return target


def earlier_versions(*, dataset: Dataset) -> QuerySet[AnswerSet]:
    """The versions of the dataset's answers that are not current (the candidate models', not the
    injection probe's), each with `answer_count`: by model name, newest version first."""
    return (
        AnswerSet.objects.filter(dataset=dataset, is_current=False, model__is_probe=False)
        .select_related("model")
        .annotate(answer_count=Count("answers"))
        .order_by("model__name", "-version")
    )


def current_answer_sets(*, dataset: Dataset, models: Iterable[CandidateModel]) -> list[AnswerSet]:
    """The current versions of these models' answers on the dataset (models without none left out)."""
    return list(
        AnswerSet.objects.filter(dataset=dataset, model__in=list(models), is_current=True).select_related("model")
    )


def run_answers(run: JudgeRun) -> QuerySet[Answer]:
    """The answers the run judged: those of the versions it pinned when it was made."""
    return Answer.all_versions.filter(answer_set__runs=run)


def run_answers_of(run: JudgeRun, *, item_ids, model_ids) -> list[Mapping[str, Any]]:
    """The run's answers to a few items by a few models ({item_id, model_id, text, answer_set_id}),
    read through the item index: an item has a few answers (each model's versions), a version
    has one per item of its data set. Asked for the run's versions in SQL, PostgreSQL chose the
    version index whenever its statistics predated them (a data set judged right after it was
    imported) and read every answer of the versions for every shard: 2,000 rows for 10."""
    pinned = set(run.answer_sets.filter(model_id__in=model_ids).values_list("pk", flat=True))
    rows = Answer.all_versions.filter(item_id__in=list(item_ids)).values("item_id", "model_id", "text", "answer_set_id")
    return [row for row in rows if row["answer_set_id"] in pinned]


def run_answer_versions(run: JudgeRun) -> dict[str, int]:
    """{model name: version} of the answers the run judged."""
    return dict(run.answer_sets.order_by("model__name").values_list("model__name", "version"))
