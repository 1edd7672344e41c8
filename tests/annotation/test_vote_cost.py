"""A vote and a next cost the same at any size of campaign, and the counters that make it so
(each pair's votes, each annotator's and the campaign's tallies, an adaptive campaign's questions
per model pair) always equal what they count; an annotator's skips cannot draw the budget ahead
of the votes, and nobody is told "done" while a model pair still has a question for them."""

import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from annotation.adaptive import MAX_DRAWN_UNVOTED
from annotation.campaigns import campaign_create, gold_pair_add
from annotation.counters import counters_mismatches
from annotation.models import (
    AnnotatorTally,
    Assignment,
    Campaign,
    CampaignTally,
    ComparisonPair,
    Vote,
)
from annotation.selectors import annotator_progress
from annotation.services import WAIT, assignment_next, assignment_skip, nothing_leased_reason, vote_cast, vote_undo
from annotation.upkeep import pair_reassign, pair_release
from curation.models import Item
from judging.models import Answer
from tests.factories import CandidateModelFactory, DatasetFactory, UserFactory

on_postgresql = pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL (set DATABASE_URL)")


def world(questions, models, annotators, answered=None, prefix="cost"):
    """A dataset of `questions` answered by `models` candidates (`answered`: question number ->
    model numbers, default all) and `annotators` annotators, written in bulk."""
    dataset = DatasetFactory()
    candidates = [CandidateModelFactory(name=f"{prefix}-model-{k}") for k in range(models)]
    items = Item.objects.bulk_create(
        Item(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?") for n in range(questions)
    )
    Answer.objects.bulk_create(
        Answer(item=item, model=candidates[k], text=f"answer {k} to {n}")
        for n, item in enumerate(items)
        for k in (answered or {}).get(n, range(models))
    )
    people = [UserFactory(username=f"{prefix}{k}", roles=["annotator"]) for k in range(annotators)]
    return dataset, candidates, items, people


def adaptive(dataset, models, people, slug="adaptive", **options):
    return campaign_create(
        slug=slug,
        title="Adaptive" if slug == "adaptive" else f"Adaptive ({slug})",
        dataset=dataset,
        candidates=models,
        annotators=people,
        sampling=Campaign.Sampling.ADAPTIVE,
        **options,
    )


@pytest.mark.django_db
def test_every_write_keeps_the_counters_equal_to_what_they_count():
    dataset, models, items, people = world(questions=4, models=3, annotators=5)
    first, second, third, fourth, spare = people
    campaign = campaign_create(
        slug="mixed", title="Mixed", dataset=dataset, candidates=models, question_count=4, pairs_per_question=2,
        votes_per_pair=2, annotators=people, gold_every=2, lease_seconds=60,
    )  # fmt: skip
    gold_pair_add(campaign=campaign, item=items[0], model_a=models[0], model_b=models[1], winner="model_a")
    now = timezone.now()
    for person in (first, second, third):
        for _ in range(3):
            given = assignment_next(campaign=campaign, annotator=person, now=now)
            vote_cast(token=given.token, annotator=person, choice="left", now=now)
    vote_undo(campaign=campaign, annotator=first, now=now)  # taken back: waits for a new vote
    skipped = assignment_next(campaign=campaign, annotator=second, now=now)
    assignment_skip(token=skipped.token, annotator=second)
    assert AnnotatorTally.objects.get(campaign=campaign, annotator=second).released == 1
    lapsed = assignment_next(campaign=campaign, annotator=fourth, now=now)
    if lapsed.pair.is_gold:  # the gold schedule follows the ids, which differ by database: vote it, take the next
        vote_cast(token=lapsed.token, annotator=fourth, choice="left", now=now)
        lapsed = assignment_next(campaign=campaign, annotator=fourth, now=now)
    assert not lapsed.pair.is_gold
    assert counters_mismatches(campaign=campaign) == []
    pair_release(campaign=campaign, pair_id=skipped.pair_id, actor=None)  # the skip is taken back
    assert AnnotatorTally.objects.get(campaign=campaign, annotator=second).released == 0
    # The lapsed lease's pair goes to someone else, who votes; its holder comes back later.
    later = now + timedelta(seconds=120)
    mine = pair_reassign(campaign=campaign, pair_id=lapsed.pair_id, annotator=spare, actor=None, now=later)
    vote_cast(token=mine.token, annotator=spare, choice="tie", now=later)
    assignment_next(campaign=campaign, annotator=fourth, now=later)
    assert counters_mismatches(campaign=campaign) == []
    progress = annotator_progress(campaign=campaign, annotator=first)
    assert (progress["voted"], progress["can_undo"]) == (2, False)
    ordinary = Vote.objects.filter(campaign=campaign).exclude(assignment__pair__is_gold=True).count()
    assert progress["campaign_votes"] == ordinary == sum(CampaignTally.objects.values_list("votes", flat=True))


@pytest.mark.django_db
def test_a_skip_gives_the_pair_back_without_drawing_the_budget_ahead_of_the_votes():
    dataset, models, items, (person, other) = world(questions=4, models=3, annotators=2)
    campaign = adaptive(dataset, models, [person, other], budget=12)
    seen = []
    for _ in range(15):
        given = assignment_next(campaign=campaign, annotator=person)
        if given is None:
            break
        seen.append(given.pair_id)
        assignment_skip(token=given.token, annotator=person)
    # Three pairs drawn for them, none voted on: no more, and the budget's other 9 wait for votes.
    assert len(seen) == len(set(seen)) == MAX_DRAWN_UNVOTED == 3
    assert campaign.pairs.count() == 3 and not Vote.objects.exists()
    # Not "done": their next draw waits for others' votes.
    assert nothing_leased_reason(campaign=campaign, annotator=person) == WAIT
    # Someone votes on one of them: a new pair may be drawn for the first annotator again.
    theirs = assignment_next(campaign=campaign, annotator=other)
    assert theirs.pair_id == seen[0]
    vote_cast(token=theirs.token, annotator=other, choice="left")
    again = assignment_next(campaign=campaign, annotator=person)
    assert again is not None and again.pair_id not in seen and campaign.pairs.count() == 4
    assert counters_mismatches(campaign=campaign) == []


@pytest.mark.django_db
def test_nobody_is_told_done_while_a_model_pair_has_a_question_left():
    """8 models answer question 0; only models 0 and 1 answer the 12 others. Once question 0's 28
    model pairs are drawn, one model pair in 28 still has questions: every one of them is given,
    however unlikely the design makes that model pair, each draw in the same number of queries."""
    answered = {0: range(8), **{n: [0, 1] for n in range(1, 13)}}
    dataset, models, items, (person,) = world(questions=13, models=8, annotators=1, answered=answered)
    campaign = adaptive(dataset, models, [person], budget=40, uniform_share=1)
    given = 0
    while (assignment := assignment_next(campaign=campaign, annotator=person)) is not None:
        vote_cast(token=assignment.token, annotator=person, choice="left")
        given += 1
    assert given == campaign.pairs.count() == 28 + 12
    assert counters_mismatches(campaign=campaign) == []


@pytest.mark.django_db
def test_a_budget_above_the_distinct_pairs_is_refused_with_the_number():
    from annotation.errors import AnnotationError

    dataset, models, items, people = world(questions=4, models=3, annotators=2)
    with pytest.raises(AnnotationError, match=r"make 12 distinct pairs .*24 votes at 2 per pair; a budget of 25"):
        adaptive(dataset, models, people, budget=25, votes_per_pair=2)
    assert not Campaign.objects.exists()
    assert adaptive(dataset, models, people, budget=24, votes_per_pair=2).pairs_planned == 12


# ----------------------------------------------------------------------------- PostgreSQL


def rows_touched() -> Counter:
    """Rows read (sequentially or through an index) and written in this transaction so far, by table."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, seq_tup_read + COALESCE(idx_tup_fetch, 0) + n_tup_ins + n_tup_upd + n_tup_del, seq_scan "
            "FROM pg_stat_xact_user_tables"
        )
        rows = cursor.fetchall()
    return Counter({f"{name}": touched for name, touched, _seq in rows}) + Counter(
        {f"{name} (seq scans)": seq for name, _touched, seq in rows}
    )


def filled_campaign(questions: int, prefix: str):
    """A fixed campaign of 6 model pairs per question, 2 votes per pair, its first 90 % of pairs
    full (two votes each, from two other annotators, written in bulk as the services would)."""
    dataset, models, items, (person, filler_a, filler_b) = world(
        questions=questions, models=4, annotators=3, prefix=prefix
    )
    campaign = campaign_create(
        slug=prefix, title=prefix, dataset=dataset, candidates=models, question_count=questions,
        pairs_per_question=6, votes_per_pair=2, annotators=[person, filler_a, filler_b],
    )  # fmt: skip
    pairs = list(campaign.pairs.order_by("pk"))
    full = pairs[: len(pairs) * 9 // 10]
    later = timezone.now() + timedelta(days=1)
    assignments = Assignment.objects.bulk_create(
        Assignment(pair=pair, annotator=filler, model_a_on_left=True, status="voted", leased_until=later)
        for pair in full
        for filler in (filler_a, filler_b)
    )
    Vote.objects.bulk_create(
        Vote(
            item_id=a.pair.item_id, model_a_id=a.pair.model_a_id, model_b_id=a.pair.model_b_id, winner="tie",
            campaign=campaign, assignment=a, annotator_id=a.annotator_id,
        )
        for a in assignments
    )  # fmt: skip
    ComparisonPair.objects.filter(pk__in=[pair.pk for pair in full]).update(votes_cast=2, needs_votes=False)
    AnnotatorTally.objects.bulk_create(
        AnnotatorTally(campaign=campaign, annotator=filler, voted=len(full)) for filler in (filler_a, filler_b)
    )
    for filler in (filler_a, filler_b):
        tally, _ = CampaignTally.objects.get_or_create(
            campaign=campaign, shard=filler.pk % CampaignTally.TALLY_SHARDS, defaults={"votes": 0}
        )
        tally.votes += len(full)
        tally.save()
    assert counters_mismatches(campaign=campaign) == []
    return campaign, person


@on_postgresql
@pytest.mark.django_db
def test_rows_touched_by_next_and_vote_do_not_grow_with_ten_times_the_pairs():
    """On PostgreSQL, the rows a next + progress + vote round reads and writes (pg_stat_xact_user_tables,
    which counts this transaction's own work) are the same in a campaign of 300 pairs and one of
    3,000, both 90 % full, and no annotation table is scanned sequentially."""
    small = filled_campaign(50, "small")
    large = filled_campaign(500, "large")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # planner statistics, as a database in use has
    touched = {}
    for name, (campaign, person) in {"small": small, "large": large}.items():
        rounds = Counter()
        for _ in range(3):
            before = rows_touched()
            given = assignment_next(campaign=campaign, annotator=person)
            annotator_progress(campaign=campaign, annotator=person)
            vote_cast(token=given.token, annotator=person, choice="left")
            rounds += rows_touched() - before
        touched[name] = rounds
    big = ("annotation_comparisonpair", "annotation_assignment", "annotation_vote", "judging_answer")
    relevant = {
        name: {table: n for table, n in counts.items() if table.startswith(("annotation_", "judging_", "curation_"))}
        for name, counts in touched.items()
    }
    # The tallies are a few rows here, which the planner rightly reads whole; never the big tables.
    assert not [table for table in relevant["large"] if table.endswith("(seq scans)") and table.startswith(big)]
    # The tables that grow with the campaign: about the same rows (a quarter either way: which
    # pairs the frontier holds, and how many other tests' rows share the tables, differ from run
    # to run), never ten times more.
    sized = {name: sum(n for table, n in counts.items() if table.startswith(big)) for name, counts in relevant.items()}
    assert sized["large"] <= 1.25 * sized["small"], relevant
    # About 80 rows a round, most of them the pairs being worked on now and their assignments, and
    # the tallies, read whole while they hold a few dozen rows (more here than in a database with
    # one campaign: both test campaigns' annotators are in them). The
    # campaigns' pinned answer versions (a row per campaign and model, judging/answers/versions.py)
    # are left out: a few dozen rows here, which the planner reads whole as it does the tallies,
    # the same at 300 pairs as at 3,000.
    pins = "annotation_campaign_answer_sets"
    assert relevant["large"].get(pins, 0) <= relevant["small"].get(pins, 0) + 30, relevant
    assert sum(n for table, n in relevant["large"].items() if not table.startswith(pins)) < 3 * 90, relevant


@on_postgresql
@pytest.mark.django_db
def test_the_lease_lookup_walks_the_index_of_pairs_that_need_votes():
    from annotation import leasing

    campaign, person = filled_campaign(200, "plan")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
        free = leasing._sql("free")
        cursor.execute(
            "EXPLAIN (FORMAT JSON) " + free, [campaign.pk, 0, person.pk, timezone.now(), campaign.votes_per_pair]
        )
        plan = str(cursor.fetchone()[0])
    assert "pair_needs_votes_idx" in plan, plan


@on_postgresql
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("sampling", ["fixed", "adaptive"])
def test_many_annotators_in_threads_lose_and_double_no_vote(sampling):
    """The load's nothing-lost check without its timing: 12 annotators at once, each voting until
    nothing is left, some skipping, some undoing and voting again; every vote the service confirmed
    is stored once, no pair has more votes than wanted, and every counter equals what it counts."""
    dataset, models, items, people = world(questions=10, models=3, annotators=12, prefix=sampling)
    options = {"budget": 60} if sampling == "adaptive" else {"question_count": 10, "pairs_per_question": 2}
    campaign = campaign_create(
        slug=sampling, title=sampling, dataset=dataset, candidates=models, votes_per_pair=3, annotators=people,
        sampling=sampling, **options,
    )  # fmt: skip
    confirmed: list[str] = []
    errors: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(len(people))

    def work(index, person):
        try:
            start.wait()
            rounds = 0
            while (given := assignment_next(campaign=campaign, annotator=person)) is not None:
                rounds += 1
                if index % 4 == 0 and rounds % 5 == 0:
                    assignment_skip(token=given.token, annotator=person)
                    continue
                _vote, created = vote_cast(token=given.token, annotator=person, choice="left")
                if index % 3 == 0 and rounds % 4 == 0:
                    vote_undo(campaign=campaign, annotator=person)
                    continue  # the item comes back to them first, and is voted on again
                with lock:
                    (confirmed if created else errors).append(given.token)
        except Exception as error:  # noqa: BLE001 - recorded and asserted below
            errors.append(repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(k, person)) for k, person in enumerate(people)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    stored = Counter(Vote.objects.filter(campaign=campaign).values_list("assignment__token", flat=True))
    assert stored == Counter(confirmed)  # each confirmed once, nothing else
    per_pair = Counter(Vote.objects.filter(campaign=campaign).values_list("assignment__pair_id", flat=True))
    assert max(per_pair.values()) == 3
    assert counters_mismatches(campaign=campaign) == []


@on_postgresql
@pytest.mark.django_db
def test_the_lease_lookup_stays_on_its_index_with_a_generic_plan():
    """psycopg prepares a statement once a connection has run it 5 times, and PostgreSQL may then
    plan it once for any parameters (a generic plan). The parameters' types are part of that plan:
    sent as they came (small integers go as smallint), the lookup's generic plan walked the pairs
    that no longer need votes as well, ten times the work a lease (bench/README.md). Forced here
    for every execution, the lookup still reads only the pairs that need votes."""
    from annotation import leasing

    campaign, person = filled_campaign(200, "generic")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
        cursor.execute("SET plan_cache_mode = force_generic_plan")
    try:
        with transaction.atomic():
            before = rows_touched()
            for _ in range(8):  # past psycopg's prepare threshold
                assert (
                    leasing.free_pair(
                        campaign_id=campaign.pk,
                        annotator_id=person.pk,
                        now=timezone.now(),
                        votes_per_pair=campaign.votes_per_pair,
                    )
                    is not None
                )
            touched = rows_touched() - before
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET plan_cache_mode")
    # 1,080 of the 1,200 pairs are full: a walk over them would read over 8,000 rows in 8 lookups.
    assert touched["annotation_comparisonpair"] < 8 * 20, touched
