"""Writes and reads of dataset versions: the working dataset from a study, the difficulty
filter, freezing, and what changed between two versions.

A working dataset (frozen_at empty) is where reviewers edit; freezing copies its accepted
items, with the same external ids, into a new immutable Dataset row.
"""

from datetime import datetime
from typing import cast

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, F, ProtectedError, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from core.archiving import refuse_if_archived
from core.constraints import constraint_answered
from core.erasure import WITHDRAWN, erase_item_copies
from core.errors import UserbenchError
from core.workspaces import in_workspace
from curation import reasons
from curation.datasets.maths import ITEM_FIELDS, difficulty_cut, items_diff
from curation.events import review_event_record
from curation.models import (
    Case,
    Dataset,
    DifficultyFilter,
    DifficultyScore,
    Item,
    ReferenceDraft,
    ReviewEvent,
    ReviewTask,
    Study,
    Submission,
    Translation,
)


class VersionError(UserbenchError):
    """A version operation that cannot be done; nothing was changed."""


def dataset_check_working(*, dataset: Dataset) -> None:
    """Refuse with VersionError, before anything is written, to change a frozen version (and
    with ArchivedError to change an archived dataset)."""
    refuse_if_archived(dataset)
    if dataset.frozen_at is not None:
        raise VersionError(_("Dataset %(name)s is a frozen version and cannot change.") % {"name": dataset.name})


@transaction.atomic
def study_dataset_build(*, study: Study, name: str, created_by: User | None = None) -> tuple[Dataset, int]:
    """Create (or extend) the working dataset of a study from its accepted cases.

    One item per accepted case of a submitted, not excluded submission that has a question and
    is not a duplicate of the same participant's earlier case. Existing items are left as they
    are (they may carry reviewers' work); returns the dataset and how many items were added.
    """
    # Looked up in the study's workspace only: a namesake of another workspace is another dataset.
    dataset, _created = in_workspace(Dataset.objects.all(), study.workspace_id).get_or_create(
        name=name,
        defaults={
            "workspace_id": study.workspace_id,
            "source": Dataset.Source.STUDY,
            "study": study,
            "created_by": created_by,
        },
    )
    refuse_if_archived(study)
    dataset_check_working(dataset=dataset)
    if dataset.study_id not in (None, study.pk):
        raise VersionError(_("Dataset %(name)s belongs to another study.") % {"name": name})
    have = set(dataset.items.values_list("source_case_id", flat=True))
    cases = (
        Case.objects.filter(
            submission__study=study,
            submission__status=Submission.Status.SUBMITTED,
            submission__excluded=False,
            review_status=Case.ReviewStatus.ACCEPTED,
            curation__isnull=False,
            curation__duplicate_of__isnull=True,
        )
        .exclude(curation__question="")
        .exclude(pk__in=[pk for pk in have if pk])
        .select_related("curation", "submission")
        .order_by("submission_id", "position")
    )
    added = 0
    for case in cases:
        item = Item.objects.create(
            dataset=dataset,
            external_id=f"case-{case.pk}",
            question=case.curation.question,
            intent=case.intent,
            language=case.curation.language or case.submission.language,
            country=case.submission.country,
            source_case=case,
            created_by=case.entered_by,
            # The reviewed conversation, never the participant's raw text: PII a reviewer removed
            # stays removed in the dataset and everything made from it.
            metadata={
                "source": f"study:{study.slug}",
                "service": case.service,
                "conversation": case.curation.conversation,
            },
        )
        review_event_record(
            action=ReviewEvent.Action.ADDED,
            item=item,
            case=case,
            actor=created_by,
            after={"dataset": dataset.name, "question": item.question},
        )
        added += 1
    return dataset, added


def working_copy_name(dataset: Dataset) -> str:
    """The name a working copy of a frozen dataset gets unless the researcher chooses one."""
    return f"{dataset.name.split('@', 1)[0]}-work"[:100]


DATASET_NAME_CONSTRAINT = "dataset_name_unique_per_workspace"


def _copy_name_taken(name: str) -> VersionError:
    return VersionError(
        _("A dataset named %(name)s exists already in this workspace; choose another name for the copy.")
        % {"name": repr(name)}
    )


@transaction.atomic
def dataset_working_copy(*, dataset: Dataset, name: str = "", created_by: User | None = None) -> tuple[Dataset, bool]:
    """A working dataset with the items of a frozen one (an import or a version), in one step,
    so LLM steps and reviews can change them; returns (the copy, whether it was made now).

    The frozen dataset never changes. The copy records it as its previous version (so freezing
    the copy shows the diff against it) and each copied item records the item it came from.
    Asking again for the same name returns the copy made before, with the work done in it.
    """
    refuse_if_archived(dataset)
    if dataset.frozen_at is None:
        raise VersionError(_("Dataset %(name)s is already a working dataset.") % {"name": dataset.name})
    name = (name or working_copy_name(dataset)).strip()
    if not name or len(name) > 90 or "@" in name:
        raise VersionError(_("A working dataset's name has 1 to 90 characters and no @."))
    existing = in_workspace(Dataset.objects.all(), dataset.workspace_id).filter(name=name).first()
    if existing is not None:
        if existing.frozen_at is None and existing.previous_version_id == dataset.pk:
            return existing, False
        raise _copy_name_taken(name)
    # Taken meanwhile by another request: the same words as the check above.
    with constraint_answered(Dataset, DATASET_NAME_CONSTRAINT, lambda: _copy_name_taken(name)):
        copy = Dataset.objects.create(
            name=name,
            description=dataset.description,
            source=dataset.source,
            study=dataset.study,
            previous_version=dataset,
            created_by=created_by,
            workspace_id=dataset.workspace_id,
        )
    originals = list(dataset.items.order_by("id"))
    Item.objects.bulk_create(
        [
            _item_copy(
                item,
                dataset=copy,
                link={"copied_from_item": item.pk},
                excluded=item.excluded,
                exclusion_reason=item.exclusion_reason,
            )
            for item in originals
        ]
    )
    copied = {item.external_id: item for item in copy.items.all()}
    ReviewEvent.objects.bulk_create(
        [
            ReviewEvent(
                action=ReviewEvent.Action.ADDED,
                item=copied[item.external_id],
                actor=created_by,
                after={"dataset": copy.name, "copied_from": dataset.name},
            )
            for item in originals
        ]
    )
    return copy, True


def freezable_items(dataset: Dataset) -> QuerySet[Item]:
    """Items a freeze would take: not excluded, with a question, and nothing left to review."""
    open_tasks = ReviewTask.objects.filter(item_id__isnull=False).exclude(status=ReviewTask.Status.DONE)
    return (
        dataset.items.filter(excluded=False)
        .exclude(question="")
        .exclude(pk__in=open_tasks.values("item_id"))
        .order_by("external_id")
    )


def _source(item: Item) -> str:
    return item.metadata.get("source") or item.dataset.source


def _item_copy(item: Item, *, dataset: Dataset, link: dict, **fields) -> Item:
    """An unsaved copy of `item` in `dataset`: the same content and provenance, with `link` (which
    item it came from) added to its metadata. A freeze and a working copy both make these."""
    return Item(
        dataset=dataset,
        external_id=item.external_id,
        question=item.question,
        reference=item.reference,
        intent=item.intent,
        category=item.category,
        subcategory=item.subcategory,
        language=item.language,
        country=item.country,
        source_case_id=item.source_case_id,
        created_by_id=item.created_by_id,
        metadata={**item.metadata, "source": _source(item), **link},
        **fields,
    )


class MissingReferences(VersionError):
    """A freeze that would take items without a reference answer, not confirmed; nothing was changed."""

    def __init__(self, message: str, *, missing: int, total: int):
        super().__init__(message)
        self.missing, self.total = missing, total


def missing_references_message(*, missing: int, total: int) -> str:
    """What a freeze or a run says about items without a reference answer."""
    return _(
        "%(missing)d of %(total)d items have no reference answer: a reference-anchored judge would compare "
        "their answers with nothing. Draft the references first (background job “Draft references for items "
        "without one” on the dataset's page), or confirm to freeze without them."
    ) % {"missing": missing, "total": total}


@transaction.atomic
def dataset_freeze(
    *, dataset: Dataset, created_by: User | None = None, confirm_missing_references: bool = False
) -> Dataset:
    """Freeze the accepted items of a working dataset into a new immutable version.

    The version is named '<name>@v<n>', keeps each item's external id (stable across
    versions), links to the previous version, and records a FROZEN event per item. Items
    without a reference answer are frozen only with `confirm_missing_references`; otherwise
    MissingReferences says how many lack one and nothing is written.
    """
    dataset = Dataset.objects.select_for_update().get(pk=dataset.pk)
    dataset_check_working(dataset=dataset)
    items = list(freezable_items(dataset))
    if not items:
        raise VersionError(_("Nothing to freeze: no accepted item without open reviews."))
    missing = sum(1 for item in items if not item.reference.strip())
    if missing and not confirm_missing_references:
        raise MissingReferences(
            missing_references_message(missing=missing, total=len(items)), missing=missing, total=len(items)
        )
    previous = dataset.frozen_versions.order_by("-version").first()
    # A frozen version always has its number.
    number = (cast(int, previous.version) if previous else 0) + 1
    name = f"{dataset.name}@v{number}"
    # Another dataset of the workspace may hold the version's name (one imported under it).
    taken = VersionError(
        _("A dataset named %(name)s exists already in this workspace; rename it before freezing.")
        % {"name": repr(name)}
    )
    if in_workspace(Dataset.objects.all(), dataset.workspace_id).filter(name=name).exists():
        raise taken
    with constraint_answered(Dataset, DATASET_NAME_CONSTRAINT, lambda: taken):
        version = Dataset.objects.create(
            name=name,
            description=dataset.description,
            source=dataset.source,
            study=dataset.study,
            # A working copy's first version follows the frozen dataset it was copied from.
            previous_version=previous or dataset.previous_version,
            frozen_from=dataset,
            version=number,
            frozen_at=timezone.now(),
            created_by=created_by,
            workspace_id=dataset.workspace_id,
        )
    Item.objects.bulk_create([_item_copy(item, dataset=version, link={"working_item": item.pk}) for item in items])
    ReviewEvent.objects.bulk_create(
        [
            ReviewEvent(action=ReviewEvent.Action.FROZEN, item=item, actor=created_by, after={"version": version.name})
            for item in items
        ]
    )
    return version


def version_items(dataset: Dataset) -> dict:
    """{external_id: {field: value}} of a version, the shape items_diff compares."""
    rows = {}
    for item in dataset.items.select_related("dataset").order_by("external_id"):
        values = {name: getattr(item, name) for name in ITEM_FIELDS if name != "source"}
        values["source"] = _source(item)
        rows[item.external_id] = values
    return rows


def datasets_diff(*, old: Dataset, new: Dataset):
    """What changed between two versions: added, removed and changed items (with the fields)."""
    return items_diff(version_items(old), version_items(new))


@transaction.atomic
def difficulty_filter_apply(
    *,
    dataset: Dataset,
    scores: dict[str, tuple[float, int]],
    percent: int = 50,
    run_number: int,
    created_by: User | None = None,
) -> DifficultyFilter:
    """AlignBench 2.2: exclude the percent of items with the highest mean score (the easiest).

    `scores` maps an item's external id to (mean judge score, number of judgments), as the
    judging app computes them from a run over filter models (judging.runs.difficulty
    .difficulty_filter_from_run); `run_number` records which run. Items with no score are kept
    and not ranked. The dataset may be a working dataset or a frozen version of it; in the
    second case the working items with the same external ids are marked, since a version
    never changes.
    """
    if not 0 <= percent <= 100:
        raise VersionError(_("The percentage must be between 0 and 100."))
    target = dataset if dataset.frozen_at is None else dataset.frozen_from
    refuse_if_archived(target)
    if target is None:
        raise VersionError(_("The run's dataset is frozen and has no working dataset to mark."))
    means = {external_id: mean for external_id, (mean, _count) in scores.items()}
    cut = difficulty_cut(means, percent)
    items = {item.external_id: item for item in target.items.filter(external_id__in=list(means)).select_for_update()}
    flt = DifficultyFilter.objects.create(
        dataset=target,
        run_number=run_number,
        percent=percent,
        item_count=len(items),
        excluded_count=0,
        created_by=created_by,
    )
    rows, excluded = [], 0
    for external_id, item in items.items():
        drop = external_id in cut
        rows.append(
            DifficultyScore(
                filter=flt, item=item, mean_score=means[external_id], judgments=scores[external_id][1], excluded=drop
            )
        )
        if drop and not item.excluded:
            before = {"excluded": item.excluded, "exclusion_reason": item.exclusion_reason}
            item.excluded = True
            item.exclusion_reason = reasons.DIFFICULTY_FILTERED.text(
                filter=flt.pk, mean=f"{means[external_id]:.2f}", percent=percent
            )
            item.save(update_fields=["excluded", "exclusion_reason"])
            review_event_record(
                action=ReviewEvent.Action.EXCLUDED,
                item=item,
                actor=created_by,
                before=before,
                after={"excluded": True, "exclusion_reason": item.exclusion_reason},
            )
        excluded += drop
    DifficultyScore.objects.bulk_create(rows)
    flt.excluded_count = excluded
    flt.save(update_fields=["excluded_count"])
    return flt


def dataset_versions(dataset: Dataset) -> QuerySet[Dataset]:
    """A working dataset's frozen versions (not archived), newest first, with their item counts."""
    root = dataset.frozen_from or dataset
    return root.frozen_versions.active().annotate(item_count=Count("items")).order_by("-version")


def items_withdraw(*, items: list[Item], now: datetime | None = None) -> dict:
    """Erase a withdrawn participant's items (their erasure policy, README "Security").

    An item of a working dataset is deleted with everything made from it; one that votes or
    comparison pairs still point at, and every item of a frozen version, becomes a tombstone: its
    question says WITHDRAWN, its reference, metadata and source case go, it is excluded and
    `withdrawn_at` is set, and its frozen version records when it was amended and how many items
    it lost. Drafts, translations and history values of a tombstone go too. Returns the counts
    and the texts removed (for the LLM response cache). Call inside the withdrawal's transaction.
    """
    now = now or timezone.now()
    item_ids = [item.pk for item in items]
    removed = erase_item_copies(item_ids)
    removed += list(ReferenceDraft.objects.filter(item_id__in=item_ids).exclude(text="").values_list("text", flat=True))
    for translated, localised in Translation.objects.filter(item_id__in=item_ids).values_list(
        "translation", "localised"
    ):
        removed += [text for text in (translated, localised) if text]
    deleted, tombstones = 0, []
    versions: dict[int, int] = {}
    for item in items:
        if item.dataset.frozen_at is None:
            try:
                with transaction.atomic():
                    item.delete()
                deleted += 1
                continue
            except ProtectedError:
                pass  # votes or comparison pairs point at it: it stays, as a tombstone
        tombstones.append(item)
        if item.dataset.frozen_at is not None:
            versions[item.dataset_id] = versions.get(item.dataset_id, 0) + 1
    tombstone_ids = [item.pk for item in tombstones]
    Item.objects.filter(pk__in=tombstone_ids).update(
        question=WITHDRAWN,
        reference="",
        metadata={"withdrawn": True},
        source_case=None,
        excluded=True,
        exclusion_reason=reasons.WITHDRAWN.text(),
        withdrawn_at=now,
    )
    ReferenceDraft.objects.filter(item_id__in=tombstone_ids).delete()
    Translation.objects.filter(item_id__in=tombstone_ids).delete()
    ReviewEvent.objects.filter(item_id__in=tombstone_ids).update(before={}, after={}, reason="")
    for dataset_id, count in versions.items():
        Dataset.objects.filter(pk=dataset_id).update(amended_at=now, withdrawn_items=F("withdrawn_items") + count)
    return {
        "items_deleted": deleted,
        "items_tombstoned": len(tombstones),
        "frozen_versions": sorted(Dataset.objects.filter(pk__in=versions).values_list("name", flat=True)),
        "removed_texts": removed,
    }
