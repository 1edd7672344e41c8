"""Statements prepared while the annotation tables were nearly empty are planned again as the
tables fill (annotation/leasing.py, plans_renew_as_tables_grow). PostgreSQL keeps a prepared
statement's plan until the tables' statistics change; made on an empty assignment table, the plan
read the whole table for every lease as it filled, until autovacuum came by (never, where it is
off). Counted in rows read, never timed."""

import weakref
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from annotation import leasing
from annotation.campaigns import campaign_create
from annotation.models import Assignment, ComparisonPair, Vote
from annotation.services import assignment_next, vote_cast
from tests.annotation.test_vote_cost import on_postgresql, rows_touched, world

FILLED = 1_800  # the others' assignments written once the plans were made


def a_round(campaign, person) -> None:
    lease = assignment_next(campaign=campaign, annotator=person)
    assert lease is not None
    vote_cast(token=lease.token, annotator=person, choice="left", campaign=campaign)


def assignment_rows_of_a_round_after_the_table_filled(monkeypatch, *, renew: bool) -> int:
    # This connection's count starts here; it plans again at its 9th lease: the first after the fill.
    monkeypatch.setattr(leasing, "_leases_made", weakref.WeakKeyDictionary())
    monkeypatch.setattr(leasing, "PLAN_AGAIN_FIRST", 9)
    if not renew:
        monkeypatch.setattr(leasing, "plans_renew_as_tables_grow", lambda: None)
    with connection.cursor() as cursor:
        # The tables as a new deployment has them: no pages yet (the rows other tests rolled back
        # leave dead pages behind, which ANALYZE would count as an empty table's own).
        tables = (Assignment, ComparisonPair, Vote)
        cursor.execute("VACUUM " + ", ".join(connection.ops.quote_name(model._meta.db_table) for model in tables))
    dataset, models, _items, (person, other) = world(questions=300, models=4, annotators=2, prefix="plans")
    campaign = campaign_create(
        slug="plans", title="Plans", dataset=dataset, candidates=models, question_count=300,
        pairs_per_question=6, votes_per_pair=2, annotators=[person, other],
    )  # fmt: skip
    with connection.cursor() as cursor:
        # The statistics of a fresh deployment: the assignment table analysed while empty. Plans
        # made once for every execution, as PostgreSQL comes to after a statement's fifth run.
        cursor.execute("ANALYZE")
        cursor.execute("SET plan_cache_mode = force_generic_plan")
    try:
        for _ in range(8):  # past psycopg's prepare threshold: the statements are prepared now
            a_round(campaign, person)
        later = timezone.now() + timedelta(hours=1)
        Assignment.objects.bulk_create(
            Assignment(pair=pair, annotator=other, model_a_on_left=True, leased_until=later, status="voted")
            for pair in campaign.pairs.order_by("pk")[:FILLED]
        )
        a_round(campaign, person)  # the lease that notices the table has grown
        with transaction.atomic():
            before = rows_touched()
            a_round(campaign, person)
            return (rows_touched() - before)["annotation_assignment"]
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET plan_cache_mode")


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_lease_planned_on_an_empty_table_is_planned_again_once_the_table_fills(monkeypatch):
    # 14 rows here: the round's own lookups through their indexes, its insert and its update.
    assert assignment_rows_of_a_round_after_the_table_filled(monkeypatch, renew=True) < 50


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_without_planning_again_a_lease_reads_the_whole_table(monkeypatch):
    """The fault itself, so that the test above cannot pass for another reason."""
    assert assignment_rows_of_a_round_after_the_table_filled(monkeypatch, renew=False) > FILLED


def test_a_connection_plans_again_as_a_table_filled_from_empty_doubles_then_now_and_then():
    due = [leases for leases in range(1, 5000) if leasing.plan_again_due(leases)]
    assert due == [32, 64, 128, 256, 512, 1024, 2048, 3072, 4096]
