"""Writes of a researcher changing a campaign while it runs: its title and instructions (both
languages), closing and reopening it, adding and removing annotators. The page and the API
both call `campaign_update`; each call is one entry of the audit log with every changed field's
value before and after, and reopening undoes closing.

A closed campaign leases nothing new (annotation/services.py, `assignment_next`), but a vote on
a lease already held still counts and the figures keep refreshing: closing stops the work, it
does not throw away what an annotator was finishing. A removed annotator's leases are deleted,
so their slots go back to the pool at once; their votes stay, and so do their skips (deleting a
lease changes none of the counters annotation/leasing.py keeps, which count votes and skips).
"""

from collections.abc import Sequence

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.translation import gettext as _

from annotation.campaigns import TITLE_CONSTRAINT, campaign_title_check, campaign_title_taken
from annotation.errors import AnnotationError
from annotation.manifest import manifest_instructions_changed
from annotation.models import Assignment, Campaign
from annotation.selectors import annotator_choices
from core.archiving import refuse_if_archived
from core.audit import AuditAction, audit_changes, audit_record
from core.constraints import constraint_answered

MAX_TITLE = 200
MAX_INSTRUCTIONS = 5000
# The fields a researcher may change while the campaign runs, as the model names them.
TEXT_FIELDS = ("title", "title_zh", "instructions_en", "instructions_zh")
EDITABLE = (*TEXT_FIELDS, "is_open", "annotators")


def _text_values(given: dict) -> dict:
    """The text fields given, checked (as campaign_create checks them) and stripped of the
    spaces around them; a title stays required."""
    values = {}
    for name in TEXT_FIELDS:
        if name not in given:
            continue
        value = given[name]
        if not isinstance(value, str):
            raise AnnotationError(_("%(field)s must be text.") % {"field": name})
        value = value.strip()
        if name == "title" and not value:
            raise AnnotationError(_("A campaign needs a title of 1 to 200 characters."))
        limit = MAX_TITLE if name.startswith("title") else MAX_INSTRUCTIONS
        if len(value) > limit:
            raise AnnotationError(
                _("%(field)s is at most %(max)d characters; %(n)d were given.")
                % {"field": name, "max": limit, "n": len(value)}
            )
        values[name] = value
    return values


def _annotators_named(campaign: Campaign, names: Sequence[str]) -> dict[str, User]:
    """The campaign's annotators after the change, by username: those it has keep their place
    (even one who has since lost the role, so that removing someone never depends on another);
    each one added must be an active annotator of the campaign's workspace. Unknown names are
    refused all at once, named."""
    if isinstance(names, str) or not all(isinstance(name, str) for name in names):
        raise AnnotationError(_("annotators is a list of user names."))
    wanted = list(dict.fromkeys(name.strip() for name in names if name.strip()))
    current = {person.username: person for person in campaign.annotators.all()}
    added = [name for name in wanted if name not in current]
    found = {
        person.username: person
        for person in annotator_choices(workspace_id=campaign.workspace_id).filter(username__in=added)
    }
    missing = [name for name in added if name not in found]
    if missing:
        raise AnnotationError(
            _("Not active annotators of this campaign's workspace (no such user, or without the role): %(names)s.")
            % {"names": ", ".join(missing)}
        )
    people = {name: current.get(name) or found[name] for name in wanted}
    # Each annotator votes on a pair at most once, so fewer annotators than the overlap never finish it.
    if people and campaign.votes_per_pair > len(people):
        raise AnnotationError(
            _(
                "%(votes)d votes per pair need at least %(votes)d annotators; %(n)d would be left. "
                "Add another annotator first."
            )
            % {"votes": campaign.votes_per_pair, "n": len(people)}
        )
    return people


def _leases_of(campaign: Campaign, annotators):
    """The ids of these annotators' leases in the campaign, row-locked. Locked before deleting:
    a vote being cast on one holds its row, and once it commits the lock's recheck finds a vote,
    not a lease (a delete by id would remove it)."""
    return (
        Assignment.objects.select_for_update(of=("self",))
        .filter(pair__campaign=campaign, annotator_id__in=annotators, status=Assignment.Status.LEASED)
        .values_list("pk", flat=True)
    )


def campaign_editable_check(campaign: Campaign) -> None:
    """ArchivedError for an archived campaign, read-only until restored, and for one whose dataset
    is archived (restoring it waits for the dataset: annotation/campaigns.py, campaign_archive_check)."""
    refuse_if_archived(campaign)
    refuse_if_archived(campaign.dataset)


def _plan(campaign: Campaign, changes: dict) -> tuple[dict, dict, dict[str, User] | None]:
    """(before, after, the annotators after) of the fields that `changes` really changes,
    checked; refuses what campaign_update refuses."""
    campaign_editable_check(campaign)
    unknown = sorted(set(changes) - set(EDITABLE))
    if unknown:
        raise AnnotationError(_("These cannot be changed here: %(names)s.") % {"names": ", ".join(unknown)})
    after = _text_values(changes)
    if "is_open" in changes:
        if not isinstance(changes["is_open"], bool):
            raise AnnotationError(_("is_open is true (open) or false (closed)."))
        after["is_open"] = changes["is_open"]
    before = {name: getattr(campaign, name) for name in after}
    people = _annotators_named(campaign, changes["annotators"]) if "annotators" in changes else None
    if people is not None:
        before["annotators"] = sorted(campaign.annotators.values_list("username", flat=True))
        after["annotators"] = sorted(people)
    same = [name for name in after if before[name] == after[name]]
    for name in same:
        del before[name], after[name]
    if "title" in after:
        # Titles are unique within the workspace, as when the campaign was made.
        campaign_title_check(title=after["title"], workspace_id=campaign.workspace_id, exclude_pk=campaign.pk)
    return before, after, people


def campaign_changes(*, campaign: Campaign, changes: dict) -> dict[str, tuple]:
    """What campaign_update would change, as {field: (before, after)} in full, checked, without
    writing anything: the page shows it before the researcher confirms."""
    before, after, _people = _plan(campaign, changes)
    return {name: (before[name], after[name]) for name in after}


@transaction.atomic
def campaign_update(*, campaign: Campaign, actor: User | None, changes: dict, via: str = "") -> dict[str, list]:
    """Change a running campaign: `changes` holds any of `title`, `title_zh`, `instructions_en`,
    `instructions_zh`, `is_open` (False closes it, True reopens it) and `annotators` (every
    annotator's user name, the whole list after the change). Returns {field: [before, after]}
    of what changed, as the audit log records it; nothing changed records nothing.

    Removing an annotator deletes their leases (not their votes or skips), so others may take
    those pairs now. Refuses (AnnotationError, nothing written) an unknown field, a title left
    empty, text over its limit, an unknown annotator, or fewer annotators than votes per pair;
    an archived campaign, or one on an archived dataset, with ArchivedError."""
    if isinstance(changes.get("annotators"), (list, tuple)):
        # The leases of those leaving are locked before the campaign's row, in the order an
        # annotator's own request takes them (its lease, then the campaign's row when it draws or
        # votes), so the two never wait on each other.
        staying = [name for name in changes["annotators"] if isinstance(name, str)]
        list(_leases_of(campaign, campaign.annotators.exclude(username__in=staying).values("pk")))
    # The row lock makes edits take turns, so each entry's "before" is what the one before left.
    # NO KEY UPDATE: a vote committing meanwhile (its key share of the row) does not wait for it.
    locked = Campaign.objects.select_for_update(no_key=True).get(pk=campaign.pk)
    before, after, people = _plan(locked, changes)
    if not after:
        return {}
    details: dict = {}
    if "annotators" in after and people is not None:
        removed = sorted(set(before["annotators"]) - set(after["annotators"]))
        gone = list(locked.annotators.filter(username__in=removed).values_list("pk", flat=True))
        locked.annotators.set(list(people.values()))
        # Their leases (running, or taken back by undo and waiting for a new vote) free their slots now.
        leases = list(_leases_of(locked, gone))
        returned, _by_model = Assignment.objects.filter(pk__in=leases).delete()
        details = {
            "added": sorted(set(after["annotators"]) - set(before["annotators"])),
            "removed": removed,
            "leases_returned": returned,
        }
    fields = [name for name in after if name != "annotators"]
    for name in fields:
        setattr(locked, name, after[name])
        setattr(campaign, name, after[name])
    if {"instructions_en", "instructions_zh"} & set(fields):
        manifest_instructions_changed(campaign=locked)
        fields.append("manifest")
        campaign.manifest = locked.manifest
    if fields:
        # The title taken meanwhile by another request: the same words as the check in _plan.
        with constraint_answered(Campaign, TITLE_CONSTRAINT, lambda: campaign_title_taken(after.get("title", ""))):
            locked.save(update_fields=fields)
    changed = audit_changes(before, after)
    audit_record(
        actor=actor,
        action=AuditAction.CAMPAIGN_CHANGED,
        target=f"campaign:{locked.slug}",
        details={"fields": sorted(after), "changes": changed, **details} | ({"via": via} if via else {}),
        workspace=locked.workspace_id,
    )
    return changed
