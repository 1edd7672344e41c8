"""A vote counts only for its own campaign, on an item leased while that campaign was open; a
pair's overlap is never exceeded, even when leases expire while others take the pair; gold pairs come at positions and on
questions nobody can predict."""

import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.urls import reverse
from django.utils import timezone

from annotation.campaign_edits import campaign_update
from annotation.campaigns import gold_pair_add
from annotation.counters import counters_mismatches
from annotation.errors import AnnotationError
from annotation.models import Assignment, Vote
from annotation.services import assignment_next, gold_position, vote_cast, vote_undo
from tests.factories import AnswerFactory, ItemFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_campaigns(build_campaign):
    first, models, _items, people = build_campaign(questions=2, models=2, slug="first")
    second, _m, _i, _p = build_campaign(questions=2, models=2, slug="second")
    second.annotators.set(people)
    people[0].refresh_from_db()  # the second build saved the same accounts again
    return first, second, people[0]


def test_a_token_of_one_campaign_votes_in_no_other(client, two_campaigns):
    first, second, person = two_campaigns
    lease = assignment_next(campaign=first, annotator=person)
    client.force_login(person)
    client.post(reverse("annotation:vote", args=["second"]), {"token": lease.token, "choice": "left"})
    api = client.post(
        reverse("api-annotate-vote", args=["second"]),
        {"token": lease.token, "choice": "left"},
        content_type="application/json",
    )
    assert api.status_code == 400 and api.json() == {"detail": "This item is not assigned to you."}
    assert Vote.objects.count() == 0
    with pytest.raises(AnnotationError, match="This item is not assigned to you."):
        vote_cast(campaign=second, token=lease.token, annotator=person, choice="left")
    client.post(reverse("annotation:skip", args=["second"]), {"token": lease.token})
    assert Assignment.objects.get(pk=lease.pk).status == "leased"
    # Through its own campaign it counts.
    client.post(reverse("annotation:vote", args=["first"]), {"token": lease.token, "choice": "left"})
    assert Vote.objects.get().campaign == first


def test_a_closed_campaign_takes_the_vote_on_an_item_held_and_leases_nothing_new(client, two_campaigns):
    first, second, person = two_campaigns
    lease = assignment_next(campaign=first, annotator=person)
    first.is_open = False
    first.save()
    client.force_login(person)
    # Through another campaign it is still not theirs.
    client.post(reverse("annotation:vote", args=["second"]), {"token": lease.token, "choice": "left"})
    assert Vote.objects.count() == 0
    # The item held when it closed is still offered, and its vote counts.
    assert assignment_next(campaign=first, annotator=person).pk == lease.pk
    api = client.post(
        reverse("api-annotate-vote", args=["first"]),
        {"token": lease.token, "choice": "left"},
        content_type="application/json",
    )
    assert api.status_code == 201 and Vote.objects.get().campaign == first
    # Nothing new, and the vote stays as it is.
    assert assignment_next(campaign=first, annotator=person) is None
    with pytest.raises(AnnotationError, match="This campaign is closed: its votes can no longer be changed."):
        vote_undo(campaign=first, annotator=person)
    assert client.get(reverse("api-annotate-next", args=["first"])).status_code == 409


# ---------------------------------------------------------------- overlap under concurrency


def _race(hold_lease, contender, *, wait=1.5):
    """Run `hold_lease()` in a transaction that stays open until `contender()` (on another
    connection) has finished or has waited `wait` seconds, then commit it. Returns what the
    contender returned or raised."""
    leased, release, outcome = threading.Event(), threading.Event(), {}

    def holder():
        try:
            with transaction.atomic():
                outcome["held"] = hold_lease()
                leased.set()
                release.wait(10)
        finally:
            connection.close()

    def challenger():
        try:
            outcome["result"] = contender()
        except Exception as error:  # noqa: BLE001 - returned to the test
            outcome["result"] = error
        finally:
            connection.close()

    first = threading.Thread(target=holder)
    first.start()
    assert leased.wait(10)
    second = threading.Thread(target=challenger)
    second.start()
    second.join(wait)
    release.set()
    first.join()
    second.join()
    return outcome["held"], outcome["result"]


needs_row_locks = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="a race of row locks: SQLite runs every write transaction IMMEDIATE, one at a time, so it has none",
)


@pytest.fixture
def role_groups(transactional_db):
    """A transactional test's flush removes the role groups the migration made; put them back."""
    from django.contrib.auth.models import Group

    from core.roles import Role

    for role in Role:
        Group.objects.get_or_create(name=role.value)


@needs_row_locks
@pytest.mark.django_db(transaction=True)
def test_a_vote_being_cast_while_its_annotator_is_removed_stays_and_the_counters_stay_exact(
    role_groups, build_campaign
):
    campaign, _m, _i, (leaving, staying) = build_campaign(questions=2, models=2, votes_per_pair=1)
    lease = assignment_next(campaign=campaign, annotator=leaving)
    # The vote holds its assignment's row while the researcher removes its annotator: the removal
    # waits for it, then finds a vote, not a lease, and deletes nothing.
    (vote, _created), changed = _race(
        lambda: vote_cast(token=lease.token, annotator=leaving, choice="left"),
        lambda: campaign_update(campaign=campaign, actor=None, changes={"annotators": ["annotator1"]}),
    )
    assert changed == {"annotators": [["annotator0", "annotator1"], ["annotator1"]]}
    assert Vote.objects.get().pk == vote.pk and Assignment.objects.get(pk=lease.pk).status == "voted"
    assert counters_mismatches(campaign=campaign) == []
    assert assignment_next(campaign=campaign, annotator=staying).pair_id != lease.pair_id


@needs_row_locks
@pytest.mark.django_db(transaction=True)
def test_an_expired_lease_cannot_vote_on_a_pair_someone_is_taking_right_now(role_groups, build_campaign):
    campaign, _m, _i, (owner, taker) = build_campaign(questions=1, models=2, votes_per_pair=1, lease_seconds=60)
    start = timezone.now()
    stale = assignment_next(campaign=campaign, annotator=owner, now=start)
    later = start + timedelta(seconds=120)
    held, result = _race(
        lambda: assignment_next(campaign=campaign, annotator=taker, now=later),
        lambda: vote_cast(token=stale.token, annotator=owner, choice="left", now=later),
    )
    assert held is not None and held.pair_id == stale.pair_id
    assert isinstance(result, AnnotationError), result
    live = Assignment.objects.filter(pair_id=stale.pair_id, status="leased", leased_until__gt=later).count()
    assert Vote.objects.count() + live == 1  # the overlap of one, never two


@needs_row_locks
@pytest.mark.django_db(transaction=True)
def test_an_expired_lease_is_not_renewed_onto_a_pair_someone_is_taking_right_now(role_groups, build_campaign):
    campaign, _m, _i, (owner, taker) = build_campaign(questions=1, models=2, votes_per_pair=1, lease_seconds=60)
    start = timezone.now()
    stale = assignment_next(campaign=campaign, annotator=owner, now=start)
    later = start + timedelta(seconds=120)
    held, result = _race(
        lambda: assignment_next(campaign=campaign, annotator=taker, now=later),
        lambda: assignment_next(campaign=campaign, annotator=owner, now=later),
    )
    assert held is not None and result is None, result
    statuses = Counter(Assignment.objects.filter(pair_id=stale.pair_id).values_list("status", flat=True))
    assert statuses == {"leased": 1, "released": 1}


# ---------------------------------------------------------------- gold pairs


def test_gold_positions_differ_between_people_and_runs_and_follow_no_pattern():
    positions = [gold_position(campaign_id=7, annotator_id=a, block=b, every=5) for a in range(20) for b in range(5)]
    counts = Counter(positions)
    assert set(counts) == {0, 1, 2, 3, 4}  # not always the last item, as "every 5th" would be
    assert max(counts.values()) < 40  # of 100: no position dominates
    # Stable for one person and run (a reload shows the same), different across campaigns.
    assert gold_position(campaign_id=7, annotator_id=3, block=2, every=5) == positions[3 * 5 + 2]
    assert [gold_position(campaign_id=8, annotator_id=a, block=0, every=5) for a in range(20)] != positions[::5]


def test_a_gold_pair_never_repeats_a_question_the_annotator_has_seen(build_campaign):
    campaign, models, items, (person, _) = build_campaign(questions=3, models=2, question_count=3)
    first = assignment_next(campaign=campaign, annotator=person)
    vote_cast(token=first.token, annotator=person, choice="left")
    seen_item = first.pair.item
    extra = ItemFactory(dataset=campaign.dataset, question="A question in no ordinary pair")
    for model in models:
        AnswerFactory(item=extra, model=model)
    gold_pair_add(campaign=campaign, item=seen_item, model_a=models[0], model_b=models[1], winner="model_a")
    gold_pair_add(campaign=campaign, item=extra, model_a=models[0], model_b=models[1], winner="model_b")
    # From now on every item is due to be gold; only a gold pair on an unseen question qualifies.
    campaign.gold_every = 1
    campaign.save()
    shown = []
    while (assignment := assignment_next(campaign=campaign, annotator=person)) is not None:
        shown.append((assignment.pair.item_id, assignment.pair.is_gold))
        vote_cast(token=assignment.token, annotator=person, choice="left")
    assert shown[0] == (extra.pk, True)
    assert [item for item, gold in shown if gold] == [extra.pk]  # never the seen question's gold pair
    assert len(shown) == 3  # then the two ordinary pairs left
