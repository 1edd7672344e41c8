"""Adaptive campaigns: each new pair chosen from the votes so far, within a budget, by the rules of
fixed campaigns (blind, random sides, gold pairs, overlap, leases, skips, one look per annotator),
with the choosing probability recorded on the pair and the vote, and a fixed number of queries."""

from collections import Counter
from datetime import timedelta

import numpy as np
import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.adaptive import design_key
from annotation.campaigns import campaign_create, gold_pair_add
from annotation.errors import AnnotationError
from annotation.exports import votes_export
from annotation.models import Assignment, Campaign, ComparisonPair, StoredFigures, Vote
from annotation.selectors import annotator_progress
from annotation.services import assignment_next, assignment_skip, vote_cast, vote_undo
from stats.pairing import all_pairs
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory
from tests.figures import run_queued_figures

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    """world(questions, models, annotators, answered=None) -> (dataset, models, items, people);
    `answered` maps a question number to the model numbers that answered it (default: all)."""

    def build(questions=6, models=3, annotators=2, answered=None):
        dataset = DatasetFactory()
        candidates = [CandidateModelFactory(name=f"model-{k}") for k in range(models)]
        items = [ItemFactory(dataset=dataset, question=f"Question {n}?") for n in range(questions)]
        for n, item in enumerate(items):
            for k in (answered or {}).get(n, range(models)):
                AnswerFactory(item=item, model=candidates[k], text=f"answer {k} to {n}")
        people = [UserFactory(username=f"adaptive{k}", roles=["annotator"]) for k in range(annotators)]
        return dataset, candidates, items, people

    return build


def adaptive(dataset, models, people, slug="adaptive", **options):
    options.setdefault("budget", 10)
    return campaign_create(
        slug=slug,
        title="Adaptive" if slug == "adaptive" else f"Adaptive ({slug})",
        dataset=dataset,
        candidates=models,
        annotators=people,
        sampling=Campaign.Sampling.ADAPTIVE,
        **options,
    )


def vote_until_done(campaign, person, choice="left", limit=1000):
    """Vote `choice` (or choice(assignment)) on everything the annotator is given; the assignments."""
    given = []
    while (assignment := assignment_next(campaign=campaign, annotator=person)) is not None:
        vote_cast(
            token=assignment.token,
            annotator=person,
            choice=choice(assignment) if callable(choice) else choice,
        )
        given.append(assignment)
        assert len(given) <= limit
    return given


def unordered(pair):
    return pair.item_id, frozenset((pair.model_a_id, pair.model_b_id))


def stored_design(campaign):
    return StoredFigures.objects.get(key=design_key(campaign)).payload


def test_an_adaptive_campaign_draws_no_pair_at_creation_and_stores_a_uniform_design(world):
    dataset, models, items, people = world(questions=5, models=4)
    campaign = adaptive(dataset, models, people, budget=12, uniform_share=0.3, seed=7)
    assert (campaign.pairs.count(), campaign.pairs_drawn, campaign.pairs_planned) == (0, 0, 12)
    assert campaign.question_count == 5  # the questions it may draw from
    design = stored_design(campaign)
    assert design["models"] == [model.pk for model in models]
    assert design["uniform"] == pytest.approx([1 / 6] * 6)
    # No vote yet: every model pair is alike to the design too.
    assert design["information"] == pytest.approx([1 / 6] * 6)
    assert (design["votes"], design["remaining_votes"], design["available_pairs"]) == (0, 12, 6)
    manifest = campaign.manifest["design"]
    assert manifest["sampling"] == "adaptive"
    assert (manifest["budget"], manifest["pairs_planned"], manifest["uniform_share"]) == (12, 12, 0.3)
    assert manifest["prior_sd"] == 1.5 and manifest["gap_weight"] == 0.5
    assert "gaps between neighbours in the ranking" in manifest["criterion"]
    assert campaign.manifest["seeds"] == {"pairs": 7}


def test_each_new_pair_records_its_probability_and_the_vote_copies_it(world):
    dataset, models, items, (person, _other) = world(questions=5, models=4)
    campaign = adaptive(dataset, models, [person], budget=4, uniform_share=0.5)
    assignment = assignment_next(campaign=campaign, annotator=person)
    pair = ComparisonPair.objects.get(pk=assignment.pair_id)
    # Stored in id order; the screen sides are drawn per assignment.
    assert pair.model_a_id < pair.model_b_id and not pair.is_gold
    design = stored_design(campaign)
    k = [tuple(p) for p in all_pairs(4)].index(
        (design["models"].index(pair.model_a_id), design["models"].index(pair.model_b_id))
    )
    share = design["uniform_share"]
    assert pair.choice_probability == pytest.approx(
        share * design["uniform"][k] + (1 - share) * design["information"][k]
    )
    assert pair.chosen_by in ("uniform", "information")
    vote, _created = vote_cast(token=assignment.token, annotator=person, choice="tie")
    assert vote.choice_probability == pair.choice_probability
    rows = list(votes_export(campaign=campaign).rows)
    assert [(row["choice_probability"], row["chosen_by"]) for row in rows] == [
        (pair.choice_probability, pair.chosen_by)
    ]


def test_the_budget_caps_the_pairs_and_the_progress_counts_it(world):
    dataset, models, items, (first, second) = world(questions=6, models=3)
    campaign = adaptive(dataset, models, [first, second], budget=5)
    done = []
    for person in (first, second, first, second, first, second):
        assignment = assignment_next(campaign=campaign, annotator=person)
        if assignment is not None:
            vote_cast(token=assignment.token, annotator=person, choice="right")
            done.append(assignment)
    assert len(done) == 5
    assert assignment_next(campaign=campaign, annotator=first) is None
    assert assignment_next(campaign=campaign, annotator=second) is None
    campaign.refresh_from_db()
    assert (campaign.pairs.count(), campaign.pairs_drawn) == (5, 5)
    progress = annotator_progress(campaign=campaign, annotator=first)
    assert (progress["pairs"], progress["wanted"], progress["campaign_votes"], progress["percent"]) == (5, 5, 5, 100)


def test_nobody_sees_a_question_with_the_same_two_models_twice(world):
    # 3 questions x 3 model pairs = 9 combinations, the whole budget (18 votes at 2 per pair): every
    # combination is drawn once, the model pairs used up first never drawn again, and nothing more
    # is given once all are drawn.
    dataset, models, items, people = world(questions=3, models=3, annotators=3)
    campaign = adaptive(dataset, models, people, budget=18, votes_per_pair=2)
    seen = {person.pk: [] for person in people}
    for _round in range(12):
        for person in people:
            assignment = assignment_next(campaign=campaign, annotator=person)
            if assignment is not None:
                seen[person.pk].append(unordered(assignment.pair))
                vote_cast(token=assignment.token, annotator=person, choice="left")
    for combos in seen.values():
        assert len(combos) == len(set(combos))
    pairs = list(campaign.pairs.all())
    assert len({unordered(pair) for pair in pairs}) == len(pairs) == 9
    campaign.refresh_from_db()
    assert campaign.pairs_drawn == 9
    # Every pair got its two votes, from two different annotators.
    assert Counter(Assignment.objects.filter(status="voted").values_list("pair_id", flat=True)) == {
        pair.pk: 2 for pair in pairs
    }


def test_overlap_offers_a_drawn_pair_before_drawing_a_new_one(world):
    dataset, models, items, (first, second, third) = world(questions=6, models=3, annotators=3)
    campaign = adaptive(dataset, models, [first, second, third], budget=6, votes_per_pair=2)
    mine = assignment_next(campaign=campaign, annotator=first)
    theirs = assignment_next(campaign=campaign, annotator=second)
    assert theirs.pair_id == mine.pair_id and campaign.pairs.count() == 1
    # The pair's two slots are held: the third annotator gets a new pair.
    assert assignment_next(campaign=campaign, annotator=third).pair_id != mine.pair_id
    assert campaign.pairs.count() == 2


def test_a_lapsed_lease_or_a_skip_frees_the_slot_for_another_annotator(world):
    dataset, models, items, (first, second, third) = world(questions=6, models=3, annotators=3)
    campaign = adaptive(dataset, models, [first, second, third], budget=6, lease_seconds=60)
    now = timezone.now()
    lapsed = assignment_next(campaign=campaign, annotator=first, now=now)
    # Still held: someone else gets a new pair.
    other = assignment_next(campaign=campaign, annotator=second, now=now)
    assert other.pair_id != lapsed.pair_id
    later = now + timedelta(seconds=61)
    assert assignment_next(campaign=campaign, annotator=third, now=later).pair_id == lapsed.pair_id
    assignment_skip(token=other.token, annotator=second)
    vote_cast(token=Assignment.objects.get(annotator=third).token, annotator=third, choice="left", now=later)
    assert assignment_next(campaign=campaign, annotator=third, now=later).pair_id == other.pair_id
    assert campaign.pairs.count() == 2


def test_gold_pairs_come_as_in_fixed_campaigns_and_their_questions_are_not_redrawn(world):
    dataset, models, items, (person,) = world(questions=2, models=3, annotators=1)
    campaign = adaptive(dataset, models, [person], budget=6, gold_every=2)
    gold = gold_pair_add(campaign=campaign, item=items[0], model_a=models[2], model_b=models[0], winner="model_b")
    given = vote_until_done(campaign, person)
    golds = [assignment for assignment in given if assignment.pair.is_gold]
    assert [assignment.pair_id for assignment in golds] == [gold.pk]
    ordinary = [unordered(assignment.pair) for assignment in given if not assignment.pair.is_gold]
    # 2 questions x 3 model pairs, less the gold pair's question and models.
    assert len(ordinary) == len(set(ordinary)) == 5
    assert unordered(gold) not in ordinary
    assert Vote.objects.filter(assignment__pair=gold).get().choice_probability is None


def test_undo_gives_the_same_pair_back_and_draws_nothing(world):
    dataset, models, items, (person,) = world(questions=4, models=3, annotators=1)
    campaign = adaptive(dataset, models, [person], budget=5)
    assignment = assignment_next(campaign=campaign, annotator=person)
    vote_cast(token=assignment.token, annotator=person, choice="left")
    back = vote_undo(campaign=campaign, annotator=person)
    assert assignment_next(campaign=campaign, annotator=person).pk == back.pk == assignment.pk
    assert campaign.pairs.count() == 1


def test_with_a_uniform_share_of_one_every_pair_is_uniform(world):
    dataset, models, items, (person,) = world(questions=10, models=4, annotators=1)
    campaign = adaptive(dataset, models, [person], budget=12, uniform_share=1)
    vote_until_done(campaign, person)
    drawn = list(campaign.pairs.values_list("chosen_by", "choice_probability"))
    assert len(drawn) == 12
    assert {chosen_by for chosen_by, _p in drawn} == {"uniform"}
    assert [probability for _c, probability in drawn] == pytest.approx([1 / 6] * 12)


def test_the_design_is_refreshed_in_the_background_after_votes(world, django_capture_on_commit_callbacks):
    """Model 0 always wins and the others tie: the design is refitted by the background task (not
    by the requests), and the next pairs record the new probabilities."""
    dataset, models, items, (person,) = world(questions=40, models=4, annotators=1)
    campaign = adaptive(dataset, models, [person], budget=60, uniform_share=0.2, seed=3)
    run_queued_figures()

    def strongest_wins(assignment):
        a, b = assignment.pair.model_a_id, assignment.pair.model_b_id
        if models[0].pk not in (a, b):
            return "tie"
        model_a_won = a == models[0].pk
        return "left" if model_a_won == assignment.model_a_on_left else "right"

    for _ in range(24):
        assignment = assignment_next(campaign=campaign, annotator=person)
        # As committed: a vote queues the refresh of the campaign's stored figures, the design's too.
        with django_capture_on_commit_callbacks(execute=True):
            vote_cast(token=assignment.token, annotator=person, choice=strongest_wins(assignment))
    before = stored_design(campaign)
    assert before["votes"] == 0  # not recomputed on the request path
    assert run_queued_figures() == 1  # one refresh for the burst of votes
    after = stored_design(campaign)
    assert (after["votes"], after["fitted_votes"], after["remaining_votes"]) == (24, 24, 36)
    theta = dict(zip(after["names"], after["theta"], strict=True))
    assert theta["model-0"] == max(theta.values())
    information = np.asarray(after["information"])
    # No longer uniform: the design weighs each pair by what it would add (tests/stats/test_pairing.py
    # checks how, on counts it controls).
    assert information.max() > 1.5 * information.min()
    pairs = [tuple(pair) for pair in all_pairs(4)]
    # The design narrows the gaps between neighbours for at most a little of the per-model width.
    assert after["predicted_gap_width"] < after["predicted_gap_width_uniform"]
    assert after["predicted_width"] < 1.01 * after["predicted_width_uniform"]
    assert after["gap_weight"] == 0.5
    assignment = assignment_next(campaign=campaign, annotator=person)
    pair = assignment.pair
    k = pairs.index(tuple(sorted(after["models"].index(m) for m in (pair.model_a_id, pair.model_b_id))))
    recorded = ComparisonPair.objects.get(pk=pair.pk).choice_probability
    assert recorded == pytest.approx(0.2 * after["uniform"][k] + 0.8 * after["information"][k])


def test_the_uniform_share_holds_over_many_draws(world):
    # 200 draws over 10 model pairs of 25 questions: the draws fill 80 % of what there is, as 400
    # of 500 did (half the votes, half the time), and a share of 0.1 or 0.5 still falls outside.
    dataset, models, items, people = world(questions=25, models=5, annotators=1)
    campaign = adaptive(dataset, models, people, budget=200, uniform_share=0.3, seed=11)
    vote_until_done(campaign, people[0], limit=200)
    chosen = Counter(campaign.pairs.values_list("chosen_by", flat=True))
    # 200 draws at 0.3: the binomial's sd is 6.5; 4 sd either way.
    assert chosen["uniform"] + chosen["information"] == 200
    assert 60 - 26 <= chosen["uniform"] <= 60 + 26
    # Every model pair is compared, each with 20 of the 25 questions at most.
    per_pair = Counter(frozenset(p) for p in campaign.pairs.values_list("model_a_id", "model_b_id"))
    assert len(per_pair) == 10 and max(per_pair.values()) <= 25


def test_the_same_seed_draws_the_same_pairs_for_one_annotator(world):
    dataset, models, items, (person,) = world(questions=8, models=4, annotators=1)
    sequences = []
    for slug in ("first", "second"):
        campaign = adaptive(dataset, models, [person], slug=slug, budget=6, seed=42)
        given = vote_until_done(campaign, person, choice="tie")
        sequences.append([(a.pair.item_id, a.pair.model_a_id, a.pair.model_b_id) for a in given])
    assert sequences[0] == sequences[1] and len(sequences[0]) == 6


def test_a_model_pair_without_questions_left_is_never_drawn(world, django_capture_on_commit_callbacks):
    # Model 2 answered only question 0: its pairs run out after one question each.
    dataset, models, items, (person,) = world(
        questions=4, models=3, annotators=1, answered={0: [0, 1, 2], 1: [0, 1], 2: [0, 1], 3: [0, 1]}
    )
    campaign = adaptive(dataset, models, [person], budget=6)
    with django_capture_on_commit_callbacks(execute=True):
        given = vote_until_done(campaign, person)
    combos = Counter(frozenset((a.pair.model_a_id, a.pair.model_b_id)) for a in given)
    assert combos == {
        frozenset((models[0].pk, models[1].pk)): 4,
        frozenset((models[0].pk, models[2].pk)): 1,
        frozenset((models[1].pk, models[2].pk)): 1,
    }
    campaign.refresh_from_db()
    assert campaign.pairs_drawn == 6
    run_queued_figures()
    assert stored_design(campaign)["exhausted_pairs"] == 3


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"budget": 0}, "An adaptive campaign needs a budget from 1"),
        ({"budget": 3, "votes_per_pair": 4}, "needs a budget from 4"),
        ({"budget": 10, "uniform_share": 0}, "share of uniformly drawn pairs must be above 0"),
        ({"budget": 10, "uniform_share": 1.5}, "share of uniformly drawn pairs must be above 0"),
        ({"budget": 10, "sampling": "greedy"}, "Sampling is fixed or adaptive; 'greedy' is neither."),
    ],
)
def test_impossible_adaptive_designs_are_refused_and_change_nothing(world, options, message):
    dataset, models, items, people = world(questions=2, models=3, annotators=4)
    options = {"sampling": Campaign.Sampling.ADAPTIVE, **options}
    with pytest.raises(AnnotationError, match=message):
        campaign_create(slug="bad", title="Bad", dataset=dataset, candidates=models, annotators=people, **options)
    assert not Campaign.objects.exists() and not StoredFigures.objects.exists()


def test_a_fixed_campaign_takes_no_budget(world):
    dataset, models, items, people = world()
    with pytest.raises(AnnotationError, match="A vote budget is for adaptive campaigns"):
        campaign_create(slug="f", title="F", dataset=dataset, candidates=models, question_count=2, budget=5)
    assert not Campaign.objects.exists()


def test_the_database_keeps_the_design_whole(world):
    dataset, models, items, people = world()
    campaign = adaptive(dataset, models, people)
    for change in ({"budget": 0}, {"sampling": "fixed"}, {"uniform_share": 0}):
        with pytest.raises(IntegrityError), transaction.atomic():
            Campaign.objects.filter(pk=campaign.pk).update(**change)
    with pytest.raises(IntegrityError), transaction.atomic():
        ComparisonPair.objects.create(
            campaign=campaign, item=items[0], model_a=models[0], model_b=models[1], choice_probability=0.5
        )
    with pytest.raises(IntegrityError), transaction.atomic():
        ComparisonPair.objects.create(
            campaign=campaign, item=items[0], model_a=models[0], model_b=models[1], chosen_by="uniform"
        )


def next_pair_queries(client, campaign, person, captured):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    client.force_login(person)
    url = reverse("api-annotate-next", args=[campaign.slug])
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, response.content
    captured.append(len(queries))
    return response.json()["pair"]["token"]


def test_drawing_a_pair_costs_the_same_queries_in_a_small_and_a_large_campaign(world, client):
    """The design is read, never recomputed, on the request path: a campaign of 3 models, 3
    questions and no vote, and one of 12 models, 80 questions and 150 votes, draw with the same
    number of queries."""
    counts = {}
    for size, (questions, models_count, votes, budget) in {
        "small": (3, 3, 0, 9),
        "large": (80, 12, 150, 400),
    }.items():
        dataset, models, items, (person, busy) = world(questions=questions, models=models_count, annotators=2)
        for model in models:
            model.name = f"{size}-{model.name}"
            model.save()
        campaign = adaptive(dataset, models, [person, busy], slug=f"q-{size}", budget=budget)
        for _ in range(votes):
            assignment = assignment_next(campaign=campaign, annotator=busy)
            vote_cast(token=assignment.token, annotator=busy, choice="left")
        run_queued_figures()
        client.get("/")  # warm up: content types, the session table
        captured = []
        token = next_pair_queries(client, campaign, person, captured)
        assert Assignment.objects.get(token=token).pair.chosen_by  # a new pair was drawn
        counts[size] = captured[0]
    assert counts["small"] == counts["large"] == DRAW_QUERIES, counts


# The API's next-pair with a new adaptive pair: the fixed campaign's 7 (session, user, campaign,
# held lease, free pair, progress, ...), the annotator's tally read and their last pair noted, plus
# counting the annotator's drawn pairs nobody voted on,
# taking a budget slot, reading the design, reading the model pairs used up, finding an unused
# question, writing the pair and counting it, and the lease.
DRAW_QUERIES = 18
