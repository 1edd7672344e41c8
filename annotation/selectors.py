"""Reads of campaigns and assignments for pages and the API. Nothing here names a model to annotators."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db.models import Count, Q, QuerySet
from django.utils.translation import gettext as _

from annotation import leasing
from annotation.errors import AnnotationError, CampaignNotFound
from annotation.models import Assignment, Campaign, ComparisonPair, Vote
from annotation.rendering import render_markdown
from core.counting import count_of
from core.models import Membership
from core.roles import Role
from core.workspaces import holds, in_workspace, scoped
from curation.datasets.selectors import dataset_by_name
from curation.models import Dataset, Item
from judging.models import Answer, CandidateModel


def campaign_list_with_counts(*, user=None) -> QuerySet[Campaign]:
    """Campaigns (of the workspaces where the person is a researcher; every one for the operator)
    with their counts for researchers, gold pairs apart: ordinary pairs (`pair_count`) and the
    votes on them (`vote_count`), gold pairs (`gold_pair_count`) and the votes on those
    (`gold_vote_count`)."""
    campaigns = Campaign.objects.active()
    campaigns = campaigns if user is None else scoped(campaigns, user, role=Role.RESEARCHER.value)
    ordinary, gold = ComparisonPair.objects.filter(is_gold=False), ComparisonPair.objects.filter(is_gold=True)
    return (
        campaigns.select_related("dataset")
        .annotate(
            pair_count=count_of(ordinary, to="campaign"),
            gold_pair_count=count_of(gold, to="campaign"),
            # A campaign's votes through its pages have an assignment; imported ones count as ordinary.
            vote_count=count_of(Vote.objects.exclude(assignment__pair__is_gold=True), to="campaign"),
            gold_vote_count=count_of(Vote.objects.filter(assignment__pair__is_gold=True), to="campaign"),
        )
        .order_by("-created_at")
    )


def campaigns_for_annotator(*, user: User) -> QuerySet[Campaign]:
    """Not archived campaigns the annotator belongs to (in workspaces where they still annotate), the open ones
    first, with how many of their pairs they have voted on in each (gold pairs apart: they are not
    the campaign's pairs). Closed ones stay listed, marked so, until they are reopened."""
    return (
        scoped(Campaign.objects.active().filter(annotators=user), user, role=Role.ANNOTATOR.value)
        .annotate(
            my_vote_count=Count("votes", filter=Q(votes__annotator=user) & ~Q(votes__assignment__pair__is_gold=True))
        )
        .only(
            "slug", "title", "title_zh", "pairs_drawn", "sampling", "budget", "votes_per_pair", "is_open", "workspace"
        )
        .order_by("-is_open", "title")
    )


def campaign_by_slug(*, slug: str, dataset: Dataset | None = None, user=None) -> Campaign:
    """The campaign with this slug (on `dataset` when one is given), with its dataset;
    CampaignNotFound naming it otherwise (with a `user`, also for another workspace's)."""
    campaigns = Campaign.objects.select_related("dataset").filter(slug=slug)
    if user is not None:
        campaigns = scoped(campaigns, user, role=Role.RESEARCHER.value)
    found = (campaigns.filter(dataset=dataset) if dataset is not None else campaigns).first()
    if found is None:
        if dataset is not None:
            raise CampaignNotFound(
                _("No campaign %(slug)r on dataset %(dataset)r.") % {"slug": slug, "dataset": dataset.name}
            )
        raise CampaignNotFound(_("No campaign %(slug)r.") % {"slug": slug})
    return found


def annotator_campaign_get(*, slug: str, annotator: User) -> Campaign | None:
    """The campaign with this slug (open or closed, not archived) if `annotator` was added to it and still
    annotates in its workspace, else None; one query."""
    campaign = leasing.annotator_campaign(slug=slug, annotator_id=annotator.pk)
    if campaign is None or campaign.archived_at is not None:
        return None
    if not holds(annotator, Role.ANNOTATOR.value, campaign.workspace_id):
        return None
    return campaign


def annotator_progress(*, campaign: Campaign, annotator: User) -> dict:
    """In one query: how many items this annotator has voted on (`voted`, gold pairs included;
    `gold_voted` of them gold, `pairs_voted` the rest) and skipped, how many ordinary pairs the campaign has, whether they may undo their last vote,
    and the campaign's progress: votes on ordinary pairs by everyone (`campaign_votes`) out of
    `wanted` (pairs x votes per pair), as a whole `percent`.

    Undo is possible after a vote unless an undone item still waits for its new vote
    (each vote is its assignment turned VOTED, and undo turns it back to LEASED).
    """
    voted, gold_voted, waiting, skipped, campaign_votes = leasing.votes_and_waiting(
        campaign_id=campaign.pk, annotator_id=annotator.pk
    )
    # An adaptive campaign draws its pairs as it goes: its budget says how many it will have.
    wanted = campaign.pairs_planned * campaign.votes_per_pair
    return {
        "voted": voted,
        # Apart, for the end screen: gold pairs are quality checks, not the campaign's pairs.
        "gold_voted": gold_voted,
        "pairs_voted": voted - gold_voted,
        "skipped": skipped,
        "pairs": campaign.pairs_planned,
        "can_undo": voted > 0 and waiting == 0,
        "campaign_votes": campaign_votes,
        "wanted": wanted,
        "percent": min(100, 100 * campaign_votes // wanted) if wanted else 100,
    }


def assignment_display(*, assignment: Assignment) -> dict:
    """What an annotator sees of an assignment from assignment_next: the question and the two
    answers by screen side.

    Only the random assignment token identifies it; the model names, model ids and
    pair id stay on the server. The reference answer is never included.
    """
    pair = assignment.pair
    # assignment_next reads both answers' texts along with the lease.
    text_a, text_b = assignment.answer_a_text or "", assignment.answer_b_text or ""
    left, right = (text_a, text_b) if assignment.model_a_on_left else (text_b, text_a)
    return {
        "token": assignment.token,
        "question_html": render_markdown(pair.item.question),
        "left_html": render_markdown(left),
        "right_html": render_markdown(right),
        "language": pair.item.language,
        "leased_until": assignment.leased_until,
    }


def annotator_choices(*, workspace_id: int | None = None, workspace_ids=None) -> QuerySet:
    """Active users holding the annotator role (in that workspace, or those workspaces, when
    given), by username: who can be added to a campaign."""
    memberships = Membership.objects.filter(annotator=True)
    if workspace_id is not None:
        memberships = memberships.filter(workspace_id=workspace_id)
    if workspace_ids is not None:
        memberships = memberships.filter(workspace_id__in=workspace_ids)
    return get_user_model().objects.filter(is_active=True, pk__in=memberships.values("user_id")).order_by("username")


def annotator_by_username(*, username: str, workspace_id: int) -> User | None:
    """The active annotator of the workspace with this username, None otherwise (an annotator
    of another workspace is nobody here, as on the campaign form)."""
    return annotator_choices(workspace_id=workspace_id).filter(username=username).first() if username else None


def campaign_parts_by_name(
    *, dataset: str, models: list[str], annotators: list[str], user=None, workspace_id: int | None = None
) -> tuple:
    """The dataset, candidate models and annotators that a campaign design names, as
    (Dataset, [CandidateModel], [User]) in the order given.

    Raises DatasetNotFound for an unknown dataset, and AnnotationError naming every unknown
    model or annotator at once, so the researcher can fix the whole design in one go. With a
    `workspace_id` (a command's --workspace), the dataset is looked up in that workspace only.
    """
    found = dataset_by_name(name=dataset, user=user, workspace_id=workspace_id)
    by_name = {
        model.name: model
        for model in in_workspace(CandidateModel.objects.all(), found.workspace_id).filter(name__in=models)
    }
    unknown = [name for name in models if name not in by_name]
    if unknown:
        raise AnnotationError(_("Unknown models: %(names)s.") % {"names": ", ".join(unknown)})
    people = {
        person.username: person
        for person in annotator_choices(workspace_id=found.workspace_id).filter(username__in=annotators)
    }
    missing = [name for name in annotators if name not in people]
    if missing:
        raise AnnotationError(
            _("Not active annotators (no such user, or without the annotator role): %(names)s.")
            % {"names": ", ".join(missing)}
        )
    return found, [by_name[name] for name in models], [people[name] for name in annotators]


def questions_answered(*, dataset, candidates) -> dict[int, set[int]]:
    """Questions of the dataset answered by two or more of the candidates: item id -> model ids."""
    answered: dict[int, set[int]] = {}
    for item_id, model_id in Answer.objects.filter(item__dataset=dataset, model__in=list(candidates)).values_list(
        "item_id", "model_id"
    ):
        answered.setdefault(item_id, set()).add(model_id)
    return {item: models for item, models in answered.items() if len(models) >= 2}


def eligible_question_count(*, dataset, candidates) -> int:
    """How many questions a campaign on these candidates can draw from."""
    return len(questions_answered(dataset=dataset, candidates=candidates))


def gold_question_choices(*, dataset, limit: int = 500) -> list[tuple[str, str]]:
    """(id, question) of the dataset's questions with two or more answers: those a gold pair can use."""
    return list(
        Item.objects.filter(dataset=dataset)
        .annotate(answer_count=Count("answers"))
        .filter(answer_count__gte=2)
        .order_by("external_id")
        .values_list("external_id", "question")[:limit]
    )
