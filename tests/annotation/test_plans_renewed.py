"""A connection drops the statements it prepared as a campaign's tables fill from empty, so that
PostgreSQL plans them again on the tables as they are (annotation/leasing.py,
prepared_plans_renew_when_due). A plan PostgreSQL made on nearly empty tables read them whole for
every lease as they filled, until an ANALYZE came by (never, where autovacuum is off):
bench/README.md, "Plans made on empty tables", counts the rows and the milliseconds. What the
planner then chooses depends on the statistics of the moment, so these tests hold the mechanism:
which statements the connection holds prepared (pg_prepared_statements), never a time."""

import weakref

import pytest
from django.db import connection

from annotation import leasing
from annotation.campaigns import campaign_create
from annotation.services import assignment_next, vote_cast
from tests.annotation.test_vote_cost import on_postgresql, world


def a_round(campaign, person) -> None:
    lease = assignment_next(campaign=campaign, annotator=person)
    assert lease is not None
    vote_cast(token=lease.token, annotator=person, choice="left", campaign=campaign)


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [statement for (statement,) in cursor.fetchall()]


def campaign_leased_by(monkeypatch, *, plan_again_first: int, prefix: str, rounds: int):
    """A campaign and its annotator after `rounds` rounds on this connection, whose lease count
    starts with the campaign and whose plans are first due at lease `plan_again_first`."""
    monkeypatch.setattr(leasing, "_leases_made", weakref.WeakKeyDictionary())
    monkeypatch.setattr(leasing, "PLAN_AGAIN_FIRST", plan_again_first)
    dataset, models, _items, (person, other) = world(questions=30, models=4, annotators=2, prefix=prefix)
    campaign = campaign_create(
        slug=prefix, title=prefix, dataset=dataset, candidates=models, question_count=30,
        pairs_per_question=6, votes_per_pair=2, annotators=[person, other],
    )  # fmt: skip
    for _ in range(rounds):
        a_round(campaign, person)
    return campaign, person


@on_postgresql
@pytest.mark.django_db
def test_a_connection_drops_its_prepared_plans_when_due_and_prepares_them_again(monkeypatch):
    # Past psycopg's prepare threshold (5): the lookups are prepared; the 9th lease is due.
    campaign, person = campaign_leased_by(monkeypatch, plan_again_first=9, prefix="plans", rounds=8)
    assert any("SKIP LOCKED" in statement for statement in prepared_statements())  # the free-pair lookup

    lease = assignment_next(campaign=campaign, annotator=person)  # the 9th lease

    assert lease is not None and prepared_statements() == []
    # psycopg forgot them too: the same statements run again, unprepared, then prepared anew.
    vote_cast(token=lease.token, annotator=person, choice="left", campaign=campaign)
    for _ in range(6):
        a_round(campaign, person)
    assert any("SKIP LOCKED" in statement for statement in prepared_statements())


@on_postgresql
@pytest.mark.django_db
def test_without_a_due_lease_the_plans_stay(monkeypatch):
    """The test above cannot pass for another reason: leases that are not due drop nothing."""
    campaign_leased_by(monkeypatch, plan_again_first=64, prefix="kept", rounds=9)
    assert any("SKIP LOCKED" in statement for statement in prepared_statements())


def test_a_connection_plans_again_as_a_table_filled_from_empty_doubles_then_now_and_then():
    due = [leases for leases in range(1, 5000) if leasing.plan_again_due(leases)]
    assert due == [32, 64, 128, 256, 512, 1024, 2048, 3072, 4096]
