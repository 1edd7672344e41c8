"""A campaign at a lab's scale, built in seconds with bulk inserts, for the campaign page's tests
and bench/bench_results_pages.py: 200 annotators, 8 models x 200 questions (5,600 pairs, every
pair of models on every question), 5 votes a pair, all pairs done but `waiting` of them, which
have two votes, one running lease and one skip each; a finished pointwise judge run, so that
the page shows the alignment and agreement tables too. Votes go to annotators at random, so
almost every two annotators share some items (the agreement table's worst case).

The rows go in with raw SQL, past the counters a vote keeps (annotation/counters.py), so the
campaign's counters are then filled in from them by the backfill the migration that added them
runs: a page, a lease or a vote on this campaign reads them as it would on a real one."""

import random
import secrets
from dataclasses import dataclass
from datetime import timedelta
from importlib import import_module

from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import connection
from django.utils import timezone

from annotation.campaigns import campaign_create
from annotation.models import AnnotatorTally, Assignment, Campaign, CampaignTally, ModelPairSlots, Vote, Winner
from core.models import Membership, default_workspace_id
from curation.models import Dataset, Item
from judging.engine.counters import run_counters_refresh
from judging.models import Answer, CandidateModel, JudgeRun, Judgment

WINNERS = [Winner.MODEL_A, Winner.MODEL_B, Winner.TIE, Winner.CANNOT_DETERMINE]
_COUNTERS_MIGRATION = import_module("annotation.migrations.0011_pair_votes_and_tallies")


def _insert(model, columns: list[str], rows: list[tuple]) -> None:
    table = connection.ops.quote_name(model._meta.db_table)
    names = ", ".join(connection.ops.quote_name(column) for column in columns)
    marks = ", ".join(["%s"] * len(columns))
    with connection.cursor() as cursor:
        cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", rows)


def counters_backfill(campaign: Campaign) -> None:
    """The campaign's counters (votes per pair, annotators' and campaign's tallies, adaptive model
    pairs' questions) counted afresh from its rows, as the migration that added them did."""
    for tally in (AnnotatorTally, CampaignTally, ModelPairSlots):
        tally.objects.filter(campaign=campaign).delete()
    _COUNTERS_MIGRATION.backfill_campaign(apps, campaign)


@dataclass
class Scale:
    campaign: Campaign
    annotators: list
    waiting: list  # the waiting pairs' ids, in id order
    run: JudgeRun


def large_campaign(
    *,
    prefix: str = "scale",
    annotators: int = 200,
    models: int = 8,
    questions: int = 200,
    votes_per_pair: int = 5,
    waiting: int = 100,
    seed: int = 0,
) -> Scale:
    rng = random.Random(seed)
    dataset = Dataset.objects.create(name=f"{prefix}-data")
    items = Item.objects.bulk_create(
        Item(dataset=dataset, external_id=f"{prefix}-q{n}", question=f"Question {n}?", reference="r")
        for n in range(questions)
    )
    candidates = CandidateModel.objects.bulk_create(CandidateModel(name=f"{prefix}-m{k}") for k in range(models))
    Answer.objects.bulk_create(
        Answer(item=item, model=model, text=f"{model.name} on {item.external_id}")
        for item in items
        for model in candidates
    )
    password = make_password("pw-for-tests")
    people = get_user_model().objects.bulk_create(
        get_user_model()(username=f"{prefix}-ann{k:03d}", password=password) for k in range(annotators)
    )
    workspace_id = default_workspace_id()
    Membership.objects.bulk_create(Membership(workspace_id=workspace_id, user=user, annotator=True) for user in people)
    campaign = campaign_create(
        slug=f"{prefix}-campaign",
        title="Campaign at scale",
        dataset=dataset,
        candidates=candidates,
        question_count=questions,
        pairs_per_question=models * (models - 1) // 2,
        votes_per_pair=votes_per_pair,
        annotators=people,
    )
    pairs = list(campaign.pairs.order_by("pk").values_list("pk", "item_id", "model_a_id", "model_b_id"))
    waiting_ids = {pk for pk, *_rest in rng.sample(pairs, waiting)}
    now = timezone.now()
    later = now + timedelta(minutes=10)
    voted, leased, released = Assignment.Status.VOTED, Assignment.Status.LEASED, Assignment.Status.RELEASED
    assignments, voters = [], {}
    for pk, *_models in pairs:
        chosen = [person.pk for person in rng.sample(people, votes_per_pair)]
        voters[pk] = chosen[:2] if pk in waiting_ids else chosen
        states = [(who, voted, now) for who in voters[pk]]
        if pk in waiting_ids:
            states += [(chosen[2], leased, later), (chosen[3], released, now)]
        for who, state, until in states:
            assignments.append((pk, who, secrets.token_hex(16), rng.random() < 0.5, state, until, now))
    # Raw inserts: 56,000 rows through the ORM's bulk_create take half a minute on this machine.
    _insert(
        Assignment,
        ["pair_id", "annotator_id", "token", "model_a_on_left", "status", "leased_until", "created_at"],
        assignments,
    )
    ids = {
        (pair_id, who): pk
        for pk, pair_id, who in Assignment.objects.filter(pair__campaign=campaign).values_list(
            "pk", "pair_id", "annotator_id"
        )
    }
    votes = [
        (
            item_id,
            model_a_id,
            model_b_id,
            rng.choice(WINNERS),
            campaign.pk,
            ids[pk, who],
            who,
            "",
            "",
            rng.uniform(8, 60),
            "",
            now,
        )
        for pk, item_id, model_a_id, model_b_id in pairs
        for who in voters[pk]
    ]
    _insert(
        Vote,
        [
            "item_id",
            "model_a_id",
            "model_b_id",
            "winner",
            "campaign_id",
            "assignment_id",
            "annotator_id",
            "annotator_label",
            "comment",
            "seconds_spent",
            "source_key",
            "created_at",
        ],
        votes,
    )
    counters_backfill(campaign)
    run = JudgeRun.objects.create(
        dataset=dataset,
        mode="pointwise",
        judge_model=f"{prefix}-judge",
        status=JudgeRun.Status.FINISHED,
        total=questions * models,
    )
    run.candidates.set(candidates)
    Judgment.objects.bulk_create(
        (
            Judgment(run=run, item=item, model=model, final_score=rng.randint(1, 10), raw_text="...")
            for item in items
            for model in candidates
        ),
        batch_size=2000,
    )
    run_counters_refresh(run=run)
    return Scale(campaign=campaign, annotators=people, waiting=sorted(waiting_ids), run=run)
