"""Votes imported from a JSONL file (`import_votes`): checked whole by annotation/vote_format.py,
then matched to the dataset's questions and models, and written all or nothing."""

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable
from typing import cast

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from annotation.errors import AnnotationError
from annotation.models import Campaign, Vote
from annotation.vote_format import read_votes
from core.import_checks import FormatError, shown
from core.workspaces import in_workspace
from curation.models import Dataset, Item
from judging.models import CandidateModel

# Unknown questions are listed up to this many lines; the count of the rest follows.
MAX_LINES_LISTED = 20


def _vote_columns() -> dict[str, int]:
    """Column limits for read_votes, read from the model fields so they are the database's."""
    # Each of these fields has a max_length.
    return {
        "question_id": cast(int, Item._meta.get_field("external_id").max_length),
        "model": cast(int, CandidateModel._meta.get_field("name").max_length),
        "annotator": cast(int, Vote._meta.get_field("annotator_label").max_length),
        "comment": cast(int, Vote._meta.get_field("comment").max_length),
    }


def _line_message(error: FormatError) -> str:
    if error.code == "json":
        return _("Line %(n)d is not valid JSON: %(e)s") % {"n": error.line, "e": error.detail}
    return _("Line %(n)d: %(e)s") % {"n": error.line, "e": error.detail}


@transaction.atomic
def votes_import(
    *,
    dataset: Dataset,
    lines: Iterable,
    campaign: Campaign | None = None,
    create_models: bool = False,
    progress: Callable[[int], None] | None = None,
) -> dict:
    """Import JSONL votes (`question` or `question_id`, `model_a`, `model_b`, `winner`, `annotator`).

    The whole file or nothing. The format is checked first (annotation/vote_format.py: the
    first bad line raises AnnotationError naming it); then every question and model is looked
    up, and all unknown questions (with their lines) and all unknown models (sorted, with the
    first line naming each) are refused in one error. With `create_models` the unknown models
    are created instead: a vote needs its question and two models, not their answers, since
    votes from other tools often compare models that have no answers here. Lines already
    imported (same content, same occurrence) are skipped, so running the import again adds
    nothing twice. `lines` is a binary stream (best: encoding errors name their line) or an
    iterable of text lines.
    """
    try:
        records = read_votes(lines, columns=_vote_columns())
    except FormatError as error:
        raise AnnotationError(_("Nothing imported. %(e)s") % {"e": _line_message(error)}) from None

    items_by_id = dict(Item.objects.filter(dataset=dataset).values_list("external_id", "pk"))
    items_by_text: dict[str, int] = {}
    ambiguous: set[str] = set()
    for pk, question in Item.objects.filter(dataset=dataset).values_list("pk", "question"):
        if question.strip() in items_by_text:
            ambiguous.add(question.strip())
        items_by_text.setdefault(question.strip(), pk)
    # The models of the dataset's workspace: another team's namesake is another model.
    models_here = in_workspace(CandidateModel.objects.all(), dataset.workspace_id)
    models = dict(models_here.values_list("name", "pk"))

    question_problems: list[str] = []
    unknown_models: dict[str, int] = {}
    item_ids: list[int | None] = []
    for record in records:
        if record.question_id is not None:
            item_id = items_by_id.get(record.question_id)
            missing = _("no question of dataset %(d)s has question_id %(q)s.")
            shown_as = shown(record.question_id)
        else:
            # A record without question_id has a question (annotation/vote_format.py).
            text = cast(str, record.question).strip()
            item_id = items_by_text.get(text)
            missing = _("no question of dataset %(d)s has the question text %(q)s.")
            shown_as = shown(text)
            if text in ambiguous:
                question_problems.append(
                    _("Line %(n)d: the question appears more than once in dataset %(d)s; give question_id instead.")
                    % {"n": record.line, "d": dataset.name}
                )
        if item_id is None:
            question_problems.append(
                _("Line %(n)d: %(e)s") % {"n": record.line, "e": missing % {"d": dataset.name, "q": shown_as}}
            )
        item_ids.append(item_id)
        for name in (record.model_a, record.model_b):
            if name not in models:
                unknown_models.setdefault(name, record.line)
        if progress and record.line % 1000 == 0:
            progress(record.line)
    problems = question_problems[:MAX_LINES_LISTED]
    if len(question_problems) > MAX_LINES_LISTED:
        problems.append(_("... and %(n)d more such lines.") % {"n": len(question_problems) - MAX_LINES_LISTED})
    if unknown_models and not create_models:
        problems.append(
            _("%(n)d unknown model(s); run again with --create-models to create them:") % {"n": len(unknown_models)}
        )
        problems += [
            _("Line %(n)d: unknown model %(m)s.") % {"n": unknown_models[name], "m": shown(name)}
            for name in sorted(unknown_models)
        ]
    if problems:
        raise AnnotationError("\n".join([_("Nothing imported.")] + problems))

    created = sorted(unknown_models) if create_models else []
    if created:
        # ignore_conflicts: a model created meanwhile by another import is simply used.
        CandidateModel.objects.bulk_create(
            [CandidateModel(name=name, workspace_id=dataset.workspace_id) for name in created], ignore_conflicts=True
        )
        models.update(models_here.filter(name__in=created).values_list("name", "pk"))
    seen: Counter = Counter()
    rows = []
    for record, item_id in zip(records, item_ids):
        names = [record.model_a, record.model_b]
        canonical = json.dumps(
            [dataset.pk, item_id, names, record.winner, record.annotator], ensure_ascii=False, separators=(",", ":")
        )
        seen[canonical] += 1
        key = hashlib.sha256(f"{canonical}#{seen[canonical]}".encode()).hexdigest()
        rows.append(
            Vote(
                # Never None here: a question not found was refused above.
                item_id=cast(int, item_id),
                model_a_id=models[names[0]],
                model_b_id=models[names[1]],
                winner=record.winner,
                campaign=campaign,
                annotator_label=record.annotator,
                comment=record.comment,
                source_key=key,
            )
        )
    keys = [row.source_key for row in rows]
    existing: set[str] = set()
    # In slices: SQLite builds limit the parameters of one statement (32,766 by default, 999 before 3.32).
    for start in range(0, len(keys), 1000):
        chunk = keys[start : start + 1000]
        existing.update(Vote.objects.filter(source_key__in=chunk).values_list("source_key", flat=True))
    new = [row for row in rows if row.source_key not in existing]
    try:
        Vote.objects.bulk_create(new, batch_size=1000)
    except IntegrityError as error:  # a concurrent import of the same file
        raise AnnotationError(_("Another import of these votes ran at the same time; run it again.")) from error
    return {
        "read": len(rows),
        "created": len(new),
        "already_imported": len(rows) - len(new),
        "models_created": created,
    }
