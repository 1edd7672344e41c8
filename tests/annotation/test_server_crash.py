"""The web server killed with SIGKILL while annotators vote, on SQLite and PostgreSQL: every
vote it acknowledged is in the database afterwards, with the choice that was sent, and the
restarted server goes on taking votes.

gunicorn (two worker processes) serves config.wsgi as the README deploys it; four annotators
vote through the API at the same time from threads of this test.
"""

import random
import threading

import pytest
import requests
from rest_framework.authtoken.models import Token

from annotation.models import Assignment, Vote, Winner
from tests.processes import free_port, kill, shared_database, start_web_server, stop, wait_for  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

ACKNOWLEDGED_BEFORE_THE_KILL = 40


class Annotator(threading.Thread):
    """Votes through the API until told to stop or the server goes away; keeps every vote the
    server acknowledged (200 or 201) as (token, choice)."""

    def __init__(self, base_url: str, slug: str, key: str, seed: int):
        super().__init__(daemon=True)
        self.base_url, self.slug = base_url, slug
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Token {key}"
        self.random = random.Random(seed)
        self.acknowledged: list[tuple[str, str]] = []
        self.stopping = threading.Event()
        self.errors: list[str] = []

    def run(self):
        api = f"{self.base_url}/api/annotate/{self.slug}"
        while not self.stopping.is_set():
            try:
                shown = self.session.get(f"{api}/next/", timeout=60)
                if shown.status_code == 204:
                    return
                token = shown.json()["pair"]["token"]
                choice = self.random.choice(["left", "right", "tie"])
                answer = self.session.post(f"{api}/votes/", json={"token": token, "choice": choice}, timeout=60)
            except requests.RequestException:
                return  # the server went away: what it acknowledged is what counts
            if answer.status_code in (200, 201):
                self.acknowledged.append((token, choice))
            else:
                self.errors.append(f"{answer.status_code}: {answer.text[:200]}")


def expected_winner(assignment: Assignment, choice: str) -> str:
    if choice == "tie":
        return Winner.TIE
    return Winner.MODEL_A if (choice == "left") == assignment.model_a_on_left else Winner.MODEL_B


def server_answers(base_url: str) -> bool:
    try:
        return requests.get(f"{base_url}/accounts/login/", timeout=5).status_code == 200
    except requests.RequestException:
        return False


def vote_with(people, keys, base_url, slug, seed):
    annotators = [Annotator(base_url, slug, keys[person.pk], seed + n) for n, person in enumerate(people)]
    for annotator in annotators:
        annotator.start()
    return annotators


def test_votes_acknowledged_before_the_server_is_killed_are_all_stored(shared_database, build_campaign):
    campaign, _models, _items, people = build_campaign(questions=60, models=2, annotators=4)
    keys = {person.pk: Token.objects.create(user=person).key for person in people}
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    server = start_web_server(shared_database, port)
    try:
        wait_for(lambda: server_answers(base_url), processes=[server], what="gunicorn to answer")
        annotators = vote_with(people, keys, base_url, campaign.slug, seed=1)
        wait_for(
            lambda: sum(len(a.acknowledged) for a in annotators) >= ACKNOWLEDGED_BEFORE_THE_KILL,
            processes=[server],
            what=f"{ACKNOWLEDGED_BEFORE_THE_KILL} acknowledged votes",
        )
    finally:
        kill(server)  # SIGKILL to gunicorn and its workers, in the middle of the votes
    for annotator in annotators:
        annotator.join(timeout=120)
        assert not annotator.is_alive()
    acknowledged = [vote for annotator in annotators for vote in annotator.acknowledged]
    assert len(acknowledged) >= ACKNOWLEDGED_BEFORE_THE_KILL
    assert [error for annotator in annotators for error in annotator.errors] == []

    # Every acknowledged vote is stored, once, with the choice that was sent.
    assignments = Assignment.objects.in_bulk([token for token, _ in acknowledged], field_name="token")
    votes = {vote.assignment_id: vote for vote in Vote.objects.filter(assignment__token__in=assignments)}
    missing = [token for token, _ in acknowledged if assignments[token].pk not in votes]
    assert missing == []
    for token, choice in acknowledged:
        assignment = assignments[token]
        assert votes[assignment.pk].winner == expected_winner(assignment, choice)
        assert assignment.status == Assignment.Status.VOTED
    stored_before = Vote.objects.count()
    # At most the votes in flight at the kill were stored without their reply reaching the client.
    assert len(acknowledged) <= stored_before <= len(acknowledged) + len(people)

    # Restarted, the server goes on: the same annotators vote again, nothing stored is lost.
    server = start_web_server(shared_database, port)
    try:
        wait_for(lambda: server_answers(base_url), processes=[server], what="gunicorn to answer again")
        annotators = vote_with(people, keys, base_url, campaign.slug, seed=100)
        wait_for(lambda: sum(len(a.acknowledged) for a in annotators) >= 8, processes=[server], what="8 more votes")
        for annotator in annotators:
            annotator.stopping.set()
        for annotator in annotators:
            annotator.join(timeout=120)
    finally:
        stop(server)
    assert [error for annotator in annotators for error in annotator.errors] == []
    later = [vote for annotator in annotators for vote in annotator.acknowledged]
    assert Vote.objects.count() >= stored_before + len(later)
    assert Vote.objects.filter(assignment__token__in=[token for token, _ in acknowledged]).count() == len(acknowledged)
