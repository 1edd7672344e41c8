"""A campaign's pairs as its researcher looks after them: how many have all their votes, which
wait and on whom, a page of them at a time. Live, not stored, and read while annotators vote:
every figure comes from one snapshot where the database gives one (core/snapshot.py), and a
pair that changes between two queries elsewhere is shown as the later query saw it."""

from django.db.models import Count, F, Q, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import Assignment, Campaign
from core.snapshot import read_snapshot

# The page lists this many waiting pairs at a time (the count says how many wait in all).
WAITING_PAIRS_PER_PAGE = 25
# A cell names at most this many annotators, then says how many more.
NAMES_SHOWN = 5

VOTED, LEASED, RELEASED = Assignment.Status.VOTED, Assignment.Status.LEASED, Assignment.Status.RELEASED


def _per_pair(campaign: Campaign, members):
    """The campaign's pairs with, each, its votes, its leases (running or run out) and how many
    of the campaign's active annotators ever had it."""
    return campaign.pairs.annotate(
        votes=Count("assignments", filter=Q(assignments__status=VOTED)),
        leases=Count("assignments", filter=Q(assignments__status=LEASED)),
        members_had=Count("assignments", filter=Q(assignments__annotator__in=members)),
    )


def _assignments_of(pair_ids: list[int]) -> list[tuple]:
    """(pair id, username, status, leased until) of every assignment of these pairs, oldest first."""
    # No pair has id 0: one query even when nothing waits, so the page's count of queries is fixed.
    return list(
        Assignment.objects.filter(pair_id__in=pair_ids or [0])
        .order_by("created_at", "pk")
        .values_list("pair_id", "annotator__username", "status", "leased_until")
    )


def _names(names: list[str]) -> dict:
    return {"names": names[:NAMES_SHOWN], "more": max(0, len(names) - NAMES_SHOWN), "count": len(names)}


def _row(pair: dict, held: list[tuple], members: list[str], needed: int, now) -> dict:
    leased = [
        {"annotator": name, "until": until, "expired": until <= now} for name, state, until in held if state == LEASED
    ]
    skipped = [name for name, state, _until in held if state == RELEASED]
    had = {name for name, _state, _until in held}
    running = {lease["annotator"] for lease in leased if not lease["expired"]}
    voters = {name for name, state, _until in held if state == VOTED}
    free = [name for name in members if name not in had]
    return {
        "pair": pair["pk"],
        "question": pair["item__external_id"],
        # Counted from the same rows as the leases and skips beside it.
        "votes": len(voters),
        "needed": needed,
        "leased": leased,
        "skipped": skipped,
        "skipped_shown": _names(skipped),
        "free": free,
        "free_shown": _names(free),
        # Each vote it lacks needs a lease (one that ran out is renewed when its holder comes
        # back) or an annotator who never had it.
        "stuck": len(voters) + len(leased) + len(free) < needed,
        # Whom the researcher may give it to: annotators not voting on it or holding it now.
        "givable": [name for name in members if name not in voters and name not in running],
    }


def campaign_pair_status(
    *, campaign: Campaign, now=None, page: int = 1, per_page: int = WAITING_PAIRS_PER_PAGE
) -> dict:
    """Per-pair completion of a campaign for its researcher, gold pairs apart, in five queries
    however many pairs, votes and annotators: how many ordinary pairs have all their votes
    (`done`) and how many wait, how many of those no lease holder or remaining annotator can
    finish (`stuck`: only the researcher releasing the skips, or giving it to someone, moves it
    on), and for one page of waiting pairs (`page`, from 1; past the last is the last) who they
    wait on: the annotators holding a lease (and until when), those who skipped them, and the
    campaign's annotators who may still be offered them. `annotators` are the campaign's active
    annotators: whom a pair may be given to."""
    now = now or timezone.now()
    needed = campaign.votes_per_pair
    with read_snapshot():
        active = campaign.annotators.filter(is_active=True)
        names = list(active.order_by("username").values_list("username", flat=True))
        # The members as a subquery (a list of ids could pass SQLite's limit of parameters).
        pairs = _per_pair(campaign, active.values("pk"))
        ordinary = Q(is_gold=False)
        waiting_pairs = pairs.filter(ordinary, votes__lt=needed)
        # One query for every count, so they agree with each other. A waiting pair is stuck when
        # votes + leases + (members - members who had it) < needed.
        slack = F("votes") + F("leases") - F("members_had")
        counts = pairs.annotate(slack=slack).aggregate(
            pairs=Count("pk", filter=ordinary),
            waiting=Count("pk", filter=ordinary & Q(votes__lt=needed)),
            stuck=Count("pk", filter=ordinary & Q(votes__lt=needed, slack__lt=needed - len(names))),
            gold=Count("pk", filter=Q(is_gold=True)),
            gold_votes=Coalesce(Sum("votes", filter=Q(is_gold=True)), 0),
        )
        pages = max(1, -(-counts["waiting"] // per_page))
        page = min(max(1, page), pages)
        listed = list(
            waiting_pairs.order_by("pk").values("pk", "item__external_id")[(page - 1) * per_page : page * per_page]
        )
        # By their ids, not by the same query again: a pair that got its last vote since is still
        # the pair listed, not the next one along.
        by_pair: dict[int, list] = {pair["pk"]: [] for pair in listed}
        for pair_id, username, state, until in _assignments_of(list(by_pair)):
            by_pair[pair_id].append((username, state, until))
    rows = [_row(pair, by_pair[pair["pk"]], names, needed, now) for pair in listed]
    # Outside a snapshot a listed pair may have got its last vote since it was listed: it no
    # longer waits, so it is not shown as waiting (the counts above are from just before).
    rows = [row for row in rows if row["votes"] < needed]
    return {
        "pairs": counts["pairs"],
        "done": counts["pairs"] - counts["waiting"],
        "waiting": counts["waiting"],
        "stuck": counts["stuck"],
        "gold_pairs": counts["gold"],
        "gold_votes": counts["gold_votes"],
        "rows": rows,
        "page": page,
        "pages": pages,
        "first": (page - 1) * per_page + 1,
        "annotators": names,
    }
