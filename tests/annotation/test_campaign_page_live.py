"""The campaign page while annotators vote: a pair that gets its last vote between the page's
queries never fails it (the vote is forced in between through the real service, no timing),
and at a lab's scale (200 annotators, 8 models x 200 questions, 100 waiting pairs) the page
stays under 150 KB with one annotator picker that still releases and gives pairs; the BT API,
the dashboard and the campaign's exports stay as light."""

import re
import threading

import pytest
from django.db import connection
from django.urls import reverse

from annotation import pair_status
from annotation.counters import counters_mismatches
from annotation.figures import figures_read
from annotation.models import Assignment, Vote
from annotation.services import vote_cast
from annotation.upkeep import pair_reassign
from core.models import AuditEvent
from tests.annotation.scale import large_campaign

PAGE_BOUND = 150_000


def summary(html: str) -> str:
    return re.sub(r"\s+", " ", html.split('id="pairs-summary">', 1)[1].split("</p>", 1)[0])


def listed_pairs(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'<tr(?: class="stuck")? id="pair-(\d+)">', html)]


def campaign_with_a_lease(build_campaign):
    """27 pairs wanting one vote each (one more than a page of them): annotator0 holds the first
    pair, annotator1 the 26th, the first one past the page."""
    campaign, _models, _items, people = build_campaign(questions=27, models=2, votes_per_pair=1)
    pairs = list(campaign.pairs.order_by("pk").values_list("pk", flat=True))
    first = pair_reassign(campaign=campaign, pair_id=pairs[0], annotator=people[0], actor=None)
    pair_reassign(campaign=campaign, pair_id=pairs[25], annotator=people[1], actor=None)
    return campaign, pairs, first, people


def vote_between_the_queries(monkeypatch, cast):
    """Cast a vote (`cast()`) after the page has listed its waiting pairs and before it reads
    their assignments: the interleaving a live campaign page meets, forced."""
    real = pair_status._assignments_of
    calls = []

    def between(pair_ids):
        if not calls:
            calls.append(pair_ids)
            cast()
        return real(pair_ids)

    monkeypatch.setattr(pair_status, "_assignments_of", between)
    return calls


@pytest.mark.django_db
def test_a_pair_that_gets_its_last_vote_between_the_page_queries_does_not_fail_it(
    build_campaign, client_as, researcher, monkeypatch
):
    campaign, pairs, first, people = campaign_with_a_lease(build_campaign)
    calls = vote_between_the_queries(
        monkeypatch, lambda: vote_cast(token=first.token, annotator=people[0], choice="left")
    )
    client = client_as(researcher)
    url = reverse("annotation:results", args=[campaign.slug])
    response = client.get(url)
    assert response.status_code == 200
    assert calls == [pairs[:25]]
    assert Vote.objects.filter(assignment=first).count() == 1
    html = response.content.decode()
    # Counted before the vote; its pair, finished since it was listed, is not shown as waiting.
    assert "0 of 27 pairs have all their votes; 27 wait." in summary(html)
    assert listed_pairs(html) == pairs[1:25]
    assert "Page 1 of 2" in html
    # The next look counts it.
    monkeypatch.undo()
    html = client.get(url).content.decode()
    assert "1 of 27 pairs have all their votes; 26 wait." in summary(html)
    assert listed_pairs(html) == pairs[1:26]


@pytest.mark.django_db(transaction=True)
def test_on_postgresql_the_page_reads_one_snapshot_while_a_vote_lands(
    build_campaign, client_as, researcher, monkeypatch
):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite takes no snapshot here (its transactions begin IMMEDIATE); the test above covers it")
    campaign, pairs, first, people = campaign_with_a_lease(build_campaign)

    def cast_elsewhere():
        """The vote of another request: its own connection, committed before the page goes on."""
        failures = []

        def cast():
            try:
                vote_cast(token=first.token, annotator=people[0], choice="left")
            except Exception as error:  # noqa: BLE001 - handed to the test's thread to fail there
                failures.append(error)
            finally:
                connection.close()

        thread = threading.Thread(target=cast)
        thread.start()
        thread.join()
        assert failures == []

    vote_between_the_queries(monkeypatch, cast_elsewhere)
    client = client_as(researcher)
    response = client.get(reverse("annotation:results", args=[campaign.slug]))
    assert response.status_code == 200
    assert Vote.objects.filter(assignment=first).count() == 1
    html = response.content.decode()
    # Everything as it was when the page began: the first pair still waits, held by annotator0.
    assert "0 of 27 pairs have all their votes; 27 wait." in summary(html)
    assert listed_pairs(html) == pairs[:25]
    row = html.split(f'id="pair-{pairs[0]}">', 1)[1].split("</tr>", 1)[0]
    assert "0 / 1" in row and "annotator0 (until" in row


@pytest.fixture
def scale(db):
    built = large_campaign()
    # Fewer bootstrap rounds than the page's default: the same tables, computed in seconds.
    figures_read(what="campaign", campaign=built.campaign, run=built.run, rounds=50, compute="missing")
    figures_read(what="style", campaign=built.campaign, rounds=50, compute="missing")
    return built


def test_at_a_labs_scale_the_campaign_page_and_its_apis_stay_light_with_one_picker(scale, client_as, researcher):
    campaign = scale.campaign
    assert (campaign.pairs.count(), campaign.annotators.count(), len(scale.waiting)) == (5600, 200, 100)
    # Inserted with raw SQL, then counted: every counter a vote keeps agrees with the rows.
    assert counters_mismatches(campaign=campaign) == []
    client = client_as(researcher)
    url = reverse("annotation:results", args=[campaign.slug])
    for language in ("en", "zh-hans"):
        client.cookies["django_language"] = language
        response = client.get(url, {"rounds": 50})
        assert response.status_code == 200
        assert len(response.content) < PAGE_BOUND, (language, len(response.content))
    client.cookies["django_language"] = "en"
    html = client.get(url, {"rounds": 50}).content.decode()
    assert "5500 of 5600 pairs have all their votes; 100 wait." in summary(html)
    assert listed_pairs(html) == scale.waiting[:25]
    assert "Page 1 of 4" in html and "?rounds=50&amp;pairs_page=2#pairs" in html
    # One picker to give a pair: one list of the 200 annotators, no drop-down per row (the other
    # picker is the settings' one, whose list holds only annotators not yet in the campaign).
    assert html.count('name="annotator"') == 2 and html.count("<datalist") == 2
    assert html.count('<option value="scale-ann') == 200
    assert html.count('class="give-pick"') == 25
    # The agreement table: a page of the pairs of annotators who shared items.
    # The long tables of stored figures: 50 rows a page, the same query with the page's number.
    for table, page_name in (
        ("annotator-pairs", "kappa_page"),
        ("against-judge", "judge_page"),
        ("quality", "annotators_page"),
    ):
        rows = html.split(f'id="{table}-heading"', 1)[1].split("</table>", 1)[0]
        assert rows.count("<tr>") == 51, table  # the head and 50 rows
        assert f"?rounds=50&amp;{page_name}=2#{table}-heading" in html
    last = client.get(url, {"rounds": 50, "annotators_page": 4}).content.decode()
    assert last.split('id="quality-heading"', 1)[1].split("</table>", 1)[0].count("<tr>") == 51
    assert "scale-ann199" in last and "Page 4 of 4" in last
    second = client.get(url, {"rounds": 50, "pairs_page": 2}).content.decode()
    assert listed_pairs(second) == scale.waiting[25:50]

    # Through the one picker: give the first waiting pair to someone who never had it, and
    # release the skip of the second.
    had = set(Assignment.objects.filter(pair_id=scale.waiting[0]).values_list("annotator__username", flat=True))
    someone = next(person.username for person in scale.annotators if person.username not in had)
    pairs_url = reverse("annotation:pairs", args=[campaign.slug])
    response = client.post(pairs_url, {"pair": scale.waiting[0], "action": "reassign", "annotator": someone})
    assert response.status_code == 302
    lease = Assignment.objects.get(pair_id=scale.waiting[0], annotator__username=someone)
    assert lease.status == Assignment.Status.LEASED
    response = client.post(pairs_url, {"pair": scale.waiting[1], "action": "release"}, follow=True)
    assert "may be offered again to" in response.content.decode()
    assert not Assignment.objects.filter(pair_id=scale.waiting[1], status=Assignment.Status.RELEASED).exists()
    assert AuditEvent.objects.filter(action="campaign_changed", details__pair__in=scale.waiting[:2]).count() == 2
    assert counters_mismatches(campaign=campaign) == []

    # The BT API, the dashboard and the campaign's BT export: their size is the models', not
    # the annotators' or the pairs' (built once above: the campaign takes seconds to make).
    bt = client.get(reverse("api-campaign-bt", args=[campaign.slug]), {"rounds": 50})
    assert bt.status_code == 200 and len(bt.content) < 10_000
    assert len(bt.json()["scores"]) == 8
    dashboard = client.get(reverse("dashboard"))
    assert dashboard.status_code == 200 and len(dashboard.content) < 60_000
    export = client.get(reverse("api-export", args=["bt"]), {"campaign": campaign.slug, "format": "csv"})
    body = b"".join(export.streaming_content).decode()
    assert export.status_code == 200 and len(body.splitlines()) == 1 + 8


@pytest.mark.django_db
def test_a_vote_cast_while_the_bt_api_and_exports_compute_their_figures_fails_none_of_them(
    build_campaign, client_as, researcher, monkeypatch
):
    from annotation import figures
    from annotation.services import assignment_next

    campaign, _models, _items, people = build_campaign(questions=4, models=2, votes_per_pair=1)
    vote_cast(token=assignment_next(campaign=campaign, annotator=people[0]).token, annotator=people[0], choice="left")
    real, pending = figures.figures_compute, []

    def compute_after_a_vote(row):
        """A vote lands after the figures' inputs are read and before they are computed."""
        while pending:
            assignment = pending.pop()
            vote_cast(token=assignment.token, annotator=assignment.annotator, choice="right")
        return real(row)

    monkeypatch.setattr(figures, "figures_compute", compute_after_a_vote)
    client = client_as(researcher)
    requests = [
        (reverse("api-campaign-bt", args=[campaign.slug]), {"rounds": 20}),
        (reverse("api-export", args=["bt"]), {"campaign": campaign.slug, "format": "csv"}),
        (reverse("api-export", args=["agreement"]), {"campaign": campaign.slug, "format": "csv"}),
    ]
    for number, (url, query) in enumerate(requests, start=2):
        pending.append(assignment_next(campaign=campaign, annotator=people[number % 2]))
        response = client.get(url, query)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert response.status_code == 200, (url, body[:300])
        assert pending == [] and Vote.objects.filter(campaign=campaign).count() == number
        if number == 2:  # the BT API
            # Computed from the votes before the one cast meanwhile, and said to be stale, or
            # computed again since: never a figure that counts what it did not read.
            counted, stale = response.json()["votes"], response["X-Figures-Stale"]
            assert (counted, stale) in ((number - 1, "1"), (number, "0"))
        else:
            assert body.decode().count("\n") > 1
