"""Many annotators at once on PostgreSQL: no pair over-assigned, no vote lost, double submits stored once.

SQLite runs every transaction IMMEDIATE, so its writers are serialised by the database
itself; the real race is on PostgreSQL with SKIP LOCKED, which is what this test drives.
"""

import threading
from collections import Counter

import pytest
from django.db import close_old_connections, connection

from annotation.models import Assignment, Vote
from annotation.services import assignment_next, vote_cast

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs PostgreSQL (set DATABASE_URL) for real row locks"
    ),
]


def test_many_annotators_at_once(build_campaign):
    campaign, _, _, people = build_campaign(
        questions=10, models=3, pairs_per_question=2, annotators=16, votes_per_pair=3
    )
    assert campaign.pairs.count() == 20
    created_flags = []
    errors = []
    lock = threading.Lock()
    start = threading.Barrier(len(people))

    def submit(token, person):
        try:
            _vote, created = vote_cast(token=token, annotator=person, choice="left")
            with lock:
                created_flags.append(created)
        except Exception as error:  # noqa: BLE001 - recorded and asserted below
            errors.append(repr(error))
        finally:
            close_old_connections()
            connection.close()

    def work(person):
        try:
            start.wait()
            while (assignment := assignment_next(campaign=campaign, annotator=person)) is not None:
                # The same vote sent twice at once, as a double click would.
                twins = [threading.Thread(target=submit, args=(assignment.token, person)) for _ in range(2)]
                for twin in twins:
                    twin.start()
                for twin in twins:
                    twin.join()
        except Exception as error:  # noqa: BLE001
            errors.append(repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(person,)) for person in people]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    per_pair = Counter(Vote.objects.filter(campaign=campaign).values_list("assignment__pair_id", flat=True))
    assert len(per_pair) == 20 and set(per_pair.values()) == {3}
    assert Vote.objects.filter(campaign=campaign).count() == 60
    assert Counter(created_flags) == {True: 60, False: 60}
    assert Assignment.objects.filter(pair__campaign=campaign).count() == 60
    assert Assignment.objects.filter(pair__campaign=campaign, status="voted").count() == 60


def test_many_annotators_at_once_on_an_adaptive_campaign(build_campaign):
    """Annotators drawing new pairs at the same moment take turns on the budget: exactly the
    budget's pairs are drawn, no question is shown twice with the same two models, and every
    pair gets its votes from different annotators."""
    from annotation.models import Campaign, ComparisonPair

    campaign, _, _, people = build_campaign(
        questions=12, models=4, annotators=12, sampling=Campaign.Sampling.ADAPTIVE, budget=40, votes_per_pair=2
    )
    errors = []
    start = threading.Barrier(len(people))

    def work(person):
        try:
            start.wait()
            while (assignment := assignment_next(campaign=campaign, annotator=person)) is not None:
                vote_cast(token=assignment.token, annotator=person, choice="tie")
        except Exception as error:  # noqa: BLE001 - recorded and asserted below
            errors.append(repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(person,)) for person in people]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    pairs = list(
        ComparisonPair.objects.filter(campaign=campaign).values_list("pk", "item_id", "model_a_id", "model_b_id")
    )
    assert len(pairs) == 20
    assert len({(item, frozenset((a, b))) for _pk, item, a, b in pairs}) == 20
    campaign.refresh_from_db()
    assert campaign.pairs_drawn == 20
    voters = Counter(Vote.objects.filter(campaign=campaign).values_list("assignment__pair_id", "annotator_id"))
    assert set(voters.values()) == {1}
    per_pair = Counter(pair for pair, _annotator in voters)
    assert set(per_pair.values()) == {2} and len(per_pair) == 20


def test_the_last_pair_of_the_budget_is_offered_to_whoever_waited_for_it(build_campaign):
    """The interleaving behind a campaign ending one vote short, made to happen: annotator A draws
    the budget's last pair and has not committed; B finds no pair yet, so B waits for the
    campaign's row lock to draw one. When A commits, the budget is spent, and B must be offered
    A's pair (it wants two votes) instead of being told that the campaign is done."""
    from django.db import transaction

    from annotation.models import Campaign

    campaign, _, _, (first, second) = build_campaign(
        questions=6, models=3, annotators=2, sampling=Campaign.Sampling.ADAPTIVE, budget=12, votes_per_pair=2
    )
    Campaign.objects.filter(pk=campaign.pk).update(pairs_drawn=campaign.pairs_planned - 1)
    drawn, commit, offered, errors = threading.Event(), threading.Event(), [], []

    def draw_and_hold():
        try:
            with transaction.atomic():
                offered.append(("first", assignment_next(campaign=campaign, annotator=first)))
                drawn.set()
                commit.wait(30)
        except Exception as error:  # noqa: BLE001 - recorded and asserted below
            errors.append(repr(error))
            drawn.set()
        finally:
            connection.close()

    def wait_for_a_pair():
        try:
            offered.append(("second", assignment_next(campaign=campaign, annotator=second)))
        except Exception as error:  # noqa: BLE001
            errors.append(repr(error))
        finally:
            connection.close()

    holder = threading.Thread(target=draw_and_hold)
    holder.start()
    assert drawn.wait(30)
    waiter = threading.Thread(target=wait_for_a_pair)
    waiter.start()
    # B is blocked on the campaign's row lock once PostgreSQL says so; then A commits.
    with connection.cursor() as cursor:
        for _ in range(3000):
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
            )
            if cursor.fetchone()[0]:
                break
            threading.Event().wait(0.01)
        else:
            pytest.fail("the second annotator never waited for the campaign's lock")
    commit.set()
    holder.join()
    waiter.join()
    assert errors == []
    by_whom = dict(offered)
    assert by_whom["first"] is not None and by_whom["second"] is not None
    assert by_whom["second"].pair_id == by_whom["first"].pair_id
