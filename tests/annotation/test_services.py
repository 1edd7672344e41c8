"""Campaign creation, leasing, voting, undo, skip and gold pairs."""

from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.campaigns import campaign_create, gold_pair_add
from annotation.errors import AnnotationError
from annotation.models import Assignment, ComparisonPair, Vote, Winner
from annotation.services import assignment_next, assignment_skip, gold_position, vote_cast, vote_undo

pytestmark = pytest.mark.django_db


def test_campaign_pairs_are_balanced_across_model_pairs_and_reproducible(build_campaign):
    campaign, models, items, _ = build_campaign(questions=6, models=4, pairs_per_question=2, seed=5)
    pairs = list(ComparisonPair.objects.filter(campaign=campaign).values_list("item_id", "model_a_id", "model_b_id"))
    assert len(pairs) == 12
    by_model_pair = Counter(tuple(sorted(p[1:])) for p in pairs)
    # 12 pairs over the 6 model pairs: each exactly twice.
    assert sorted(by_model_pair.values()) == [2] * 6
    assert Counter(p[0] for p in pairs) == {item.pk: 2 for item in items}
    again = campaign_create(
        slug="again",
        title="t",
        dataset=campaign.dataset,
        candidates=models,
        question_count=6,
        pairs_per_question=2,
        seed=5,
    )
    assert sorted(
        ComparisonPair.objects.filter(campaign=again).values_list("item_id", "model_a_id", "model_b_id")
    ) == sorted(pairs)


def test_campaign_refuses_impossible_designs(build_campaign):
    campaign, models, _, _ = build_campaign(questions=2, models=3)
    with pytest.raises(AnnotationError, match="Only 2 questions of this dataset have answers"):
        campaign_create(slug="x", title="x", dataset=campaign.dataset, candidates=models, question_count=3)
    with pytest.raises(AnnotationError, match="3 candidates make at most 3 pairs per question"):
        campaign_create(
            slug="x", title="x", dataset=campaign.dataset, candidates=models, question_count=1, pairs_per_question=4
        )
    with pytest.raises(AnnotationError, match="at least two candidate models"):
        campaign_create(slug="x", title="x", dataset=campaign.dataset, candidates=models[:1], question_count=1)
    assert ComparisonPair.objects.exclude(campaign=campaign).count() == 0


def test_overlap_is_met_and_nobody_sees_a_pair_twice(build_campaign):
    campaign, _, _, people = build_campaign(questions=3, models=2, annotators=3, votes_per_pair=2)
    assert campaign.pairs.count() == 3
    seen = Counter()
    for person in people:
        while (assignment := assignment_next(campaign=campaign, annotator=person)) is not None:
            vote_cast(token=assignment.token, annotator=person, choice="left")
            seen[(assignment.pair_id, person.pk)] += 1
    assert set(seen.values()) == {1}
    per_pair = Counter(Vote.objects.filter(campaign=campaign).values_list("assignment__pair_id", flat=True))
    assert sorted(per_pair.values()) == [2, 2, 2]
    assert Vote.objects.count() == 6


def test_a_lease_holds_a_slot_until_it_runs_out(build_campaign):
    campaign, _, _, (first, second) = build_campaign(questions=1, models=2, votes_per_pair=1, lease_seconds=60)
    now = timezone.now()
    lease = assignment_next(campaign=campaign, annotator=first, now=now)
    assert assignment_next(campaign=campaign, annotator=first, now=now) == lease
    assert assignment_next(campaign=campaign, annotator=second, now=now) is None
    later = now + timedelta(seconds=61)
    taken_over = assignment_next(campaign=campaign, annotator=second, now=later)
    assert taken_over is not None and taken_over.pair_id == lease.pair_id
    vote_cast(token=taken_over.token, annotator=second, choice="tie", now=later)
    with pytest.raises(AnnotationError, match="Your time for this item ran out and others have voted on it."):
        vote_cast(token=lease.token, annotator=first, choice="left", now=later)
    assert Vote.objects.count() == 1


def test_an_abandoned_lease_is_renewed_for_its_owner_if_the_pair_has_room(build_campaign):
    campaign, _, _, (first, _) = build_campaign(questions=1, models=2, lease_seconds=60)
    now = timezone.now()
    lease = assignment_next(campaign=campaign, annotator=first, now=now)
    renewed = assignment_next(campaign=campaign, annotator=first, now=now + timedelta(seconds=300))
    assert renewed.pk == lease.pk
    assert renewed.leased_until == now + timedelta(seconds=360)


def test_sides_map_back_to_models_and_double_submit_is_stored_once(build_campaign):
    campaign, _, _, (person, _) = build_campaign(questions=2, models=2)
    assignment = assignment_next(campaign=campaign, annotator=person)
    vote, created = vote_cast(token=assignment.token, annotator=person, choice="left", comment="  clear  ")
    again, created_again = vote_cast(token=assignment.token, annotator=person, choice="left")
    assert created and not created_again and again.pk == vote.pk
    # Another choice sent for the same item is a change of mind: refused, the first vote stands.
    with pytest.raises(AnnotationError, match="already voted differently on this item: undo your vote"):
        vote_cast(token=assignment.token, annotator=person, choice="right")
    assert vote.winner == (Winner.MODEL_A if assignment.model_a_on_left else Winner.MODEL_B)
    assert vote.comment == "clear"
    assert Vote.objects.count() == 1
    assert Assignment.objects.get(pk=assignment.pk).status == "voted"


def test_bad_votes_change_nothing(build_campaign):
    campaign, _, _, (person, other) = build_campaign(questions=1, models=2)
    assignment = assignment_next(campaign=campaign, annotator=person)
    with pytest.raises(AnnotationError, match="Choose left, right, tie or cannot_determine."):
        vote_cast(token=assignment.token, annotator=person, choice="model_a")
    with pytest.raises(AnnotationError, match="This item is not assigned to you."):
        vote_cast(token=assignment.token, annotator=other, choice="left")
    with pytest.raises(AnnotationError, match="longer than 2000"):
        vote_cast(token=assignment.token, annotator=person, choice="left", comment="x" * 2001)
    assert Vote.objects.count() == 0


def test_undo_only_the_latest_vote_and_only_until_the_next(build_campaign):
    campaign, _, _, (person, _) = build_campaign(questions=3, models=2)
    first = assignment_next(campaign=campaign, annotator=person)
    vote_cast(token=first.token, annotator=person, choice="left")
    second = assignment_next(campaign=campaign, annotator=person)
    vote_cast(token=second.token, annotator=person, choice="right")
    third = assignment_next(campaign=campaign, annotator=person)
    undone = vote_undo(campaign=campaign, annotator=person)
    assert undone.pk == second.pk and Vote.objects.count() == 1
    with pytest.raises(AnnotationError, match="There is no vote to undo."):
        vote_undo(campaign=campaign, annotator=person)
    # The undone item comes back first, before the one leased meanwhile.
    assert assignment_next(campaign=campaign, annotator=person).pk == second.pk
    vote_cast(token=second.token, annotator=person, choice="tie")
    assert assignment_next(campaign=campaign, annotator=person).pk == third.pk
    assert vote_undo(campaign=campaign, annotator=person).pk == second.pk


def test_skip_returns_the_slot_and_the_annotator_never_sees_it_again(build_campaign):
    campaign, _, _, (person, other) = build_campaign(questions=1, models=2)
    assignment = assignment_next(campaign=campaign, annotator=person)
    assignment_skip(token=assignment.token, annotator=person)
    assert assignment_next(campaign=campaign, annotator=person) is None
    assert assignment_next(campaign=campaign, annotator=other).pair_id == assignment.pair_id
    with pytest.raises(AnnotationError, match="This item was skipped or returned and takes no vote."):
        vote_cast(token=assignment.token, annotator=person, choice="left")


def _undrawn(campaign, items):
    drawn = set(campaign.pairs.values_list("item_id", flat=True))
    return [item for item in items if item.pk not in drawn]


def test_gold_pairs_come_once_in_every_n_items(build_campaign):
    campaign, models, items, (person, _) = build_campaign(questions=5, question_count=4, models=2, gold_every=3)
    [unseen] = _undrawn(campaign, items)
    gold = gold_pair_add(campaign=campaign, item=unseen, model_a=models[0], model_b=models[1], winner="model_a")
    kinds = []
    while (assignment := assignment_next(campaign=campaign, annotator=person)) is not None:
        kinds.append(assignment.pair.is_gold)
        vote_cast(token=assignment.token, annotator=person, choice="left")
    # The gold pair sits where the keyed position of the first run of three puts it.
    position = gold_position(campaign_id=campaign.pk, annotator_id=person.pk, block=0, every=3)
    expected = [False] * 4
    expected.insert(position, True)
    assert kinds == expected
    with pytest.raises(AnnotationError, match="winner is model_a, model_b or tie"):
        gold_pair_add(campaign=campaign, item=items[1], model_a=models[0], model_b=models[1], winner="cannot_determine")
    assert gold.assignments.count() == 1


def test_progress_counts_gold_votes_and_says_when_undo_is_possible(build_campaign):
    from annotation.selectors import annotator_progress

    campaign, models, items, (person, _) = build_campaign(questions=4, question_count=3, models=2, gold_every=2)
    [unseen] = _undrawn(campaign, items)
    gold_pair_add(campaign=campaign, item=unseen, model_a=models[0], model_b=models[1], winner=Winner.MODEL_A)

    def progress(**expected):
        # The campaign wants 3 pairs x 1 vote; gold votes count for the annotator, not the campaign.
        base = {"voted": 0, "skipped": 0, "pairs": 3, "can_undo": False, "campaign_votes": 0, "wanted": 3, "percent": 0}
        return {**base, **expected}

    def counts():
        # The gold and ordinary votes apart are checked below, once the gold pair's place is known.
        found = annotator_progress(campaign=campaign, annotator=person)
        assert found.pop("gold_voted") + found.pop("pairs_voted") == found["voted"]
        return found

    assert counts() == progress()
    position = gold_position(campaign_id=campaign.pk, annotator_id=person.pk, block=0, every=2)
    for index in (0, 1):
        assignment = assignment_next(campaign=campaign, annotator=person)
        assert assignment.pair.is_gold is (index == position)  # one of the first two items is gold
        vote_cast(token=assignment.token, annotator=person, choice="left")
    assert counts() == progress(voted=2, can_undo=True, campaign_votes=1, percent=33)
    assert annotator_progress(campaign=campaign, annotator=person)["gold_voted"] == 1
    undone = vote_undo(campaign=campaign, annotator=person)
    # Undo takes back the latest vote: the gold one when gold came second, else the ordinary one.
    left = 1 if position == 1 else 0
    assert counts() == progress(voted=1, campaign_votes=left, percent=33 * left)
    vote_cast(token=undone.token, annotator=person, choice="tie")
    assert counts() == progress(voted=2, can_undo=True, campaign_votes=1, percent=33)
    skipped = assignment_next(campaign=campaign, annotator=person)
    assignment_skip(token=skipped.token, annotator=person)
    # Skipping twice (a double click) is acknowledged the same way and changes nothing.
    assert assignment_skip(token=skipped.token, annotator=person).pk == skipped.pk
    assert counts() == progress(voted=2, skipped=1, can_undo=True, campaign_votes=1, percent=33)
    with pytest.raises(AnnotationError, match="^You have already voted on this item: undo your vote to change it.$"):
        assignment_skip(token=undone.token, annotator=person)
