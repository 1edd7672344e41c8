"""A campaign changed while it runs: title and instructions edited, closed and reopened,
annotators added and removed, through the service, the API and the campaign page, each change
audited with its value before and after; and what an annotator is told when nothing is leased
to them (closed, wait for others, or done)."""

import pytest
from django.urls import reverse

from annotation.campaign_edits import campaign_changes, campaign_update
from annotation.counters import counters_mismatches
from annotation.errors import AnnotationError
from annotation.models import Assignment, Campaign, Vote
from annotation.services import (
    CLOSED,
    DONE,
    WAIT,
    assignment_next,
    assignment_skip,
    nothing_leased_reason,
    vote_cast,
    vote_undo,
)
from core.models import AuditEvent, Workspace
from judging.runs.manifest import text_hash
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def audit_entries(campaign):
    events = AuditEvent.objects.filter(action="campaign_changed", target=f"campaign:{campaign.slug}").order_by("pk")
    return [event for event in events if not event.details.get("created")]


def test_title_and_instructions_change_with_their_values_before_and_after(build_campaign, researcher):
    campaign, _models, _items, _people = build_campaign(instructions_en="Pick the better one.")
    changed = campaign_update(
        campaign=campaign,
        actor=researcher,
        changes={"title": "  Blind test, round 2 ", "title_zh": "盲测", "instructions_en": "Pick the better one."},
    )
    # The English instructions were already so: only what changed is recorded.
    assert changed == {"title": ["Blind test", "Blind test, round 2"], "title_zh": ["", "盲测"]}
    campaign.refresh_from_db()
    assert (campaign.title, campaign.title_zh) == ("Blind test, round 2", "盲测")
    [entry] = audit_entries(campaign)
    assert (entry.actor, entry.workspace_id, entry.details) == (
        researcher,
        campaign.workspace_id,
        {"fields": ["title", "title_zh"], "changes": changed},
    )
    # The manifest notes instructions changed while it ran, not a title.
    assert "instructions_changed" not in campaign.manifest
    campaign_update(campaign=campaign, actor=researcher, changes={"instructions_zh": "选更好的。"})
    campaign.refresh_from_db()
    [noted] = campaign.manifest["instructions_changed"]
    assert noted["zh"] == text_hash("选更好的。") and noted["en"] == campaign.manifest["instructions_hash"]["en"]
    # The same values again change nothing and record nothing.
    assert campaign_update(campaign=campaign, actor=researcher, changes={"title": "Blind test, round 2"}) == {}
    assert len(audit_entries(campaign)) == 2


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"title": "   "}, "needs a title"),
        ({"title_zh": "长" * 201}, "title_zh is at most 200 characters"),
        ({"instructions_en": "x" * 5001}, "instructions_en is at most 5000 characters"),
        ({"slug": "other"}, "These cannot be changed here: slug"),
        ({"is_open": "no"}, "is_open is true"),
        ({"annotators": ["annotator0", "nobody"]}, "no such user, or without the role\\): nobody"),
        ({"annotators": "annotator0"}, "a list of user names"),
    ],
)
def test_a_change_that_cannot_be_made_is_refused_whole(build_campaign, researcher, changes, message):
    campaign, _models, _items, _people = build_campaign()
    with pytest.raises(AnnotationError, match=message):
        campaign_update(campaign=campaign, actor=researcher, changes={"title_zh": "新", **changes})
    campaign.refresh_from_db()
    assert campaign.title_zh == "" and audit_entries(campaign) == []


def test_closing_leases_nothing_new_but_takes_the_votes_already_leased_and_reopening_undoes_it(
    build_campaign, researcher
):
    campaign, _models, _items, (first, second) = build_campaign(questions=3, models=2)
    held = assignment_next(campaign=campaign, annotator=first)
    assert campaign_update(campaign=campaign, actor=researcher, changes={"is_open": False}) == {
        "is_open": [True, False]
    }
    campaign.refresh_from_db()
    assert assignment_next(campaign=campaign, annotator=second) is None
    assert nothing_leased_reason(campaign=campaign, annotator=second) == CLOSED
    # The item held when it closed is still theirs to finish, and the vote counts.
    assert assignment_next(campaign=campaign, annotator=first).pk == held.pk
    vote, created = vote_cast(token=held.token, annotator=first, choice="left", campaign=campaign)
    assert created and vote.campaign == campaign
    with pytest.raises(AnnotationError, match="closed"):
        vote_undo(campaign=campaign, annotator=first)
    assert assignment_next(campaign=campaign, annotator=first) is None
    assert counters_mismatches(campaign=campaign) == []

    campaign_update(campaign=campaign, actor=researcher, changes={"is_open": True})
    campaign.refresh_from_db()
    assert assignment_next(campaign=campaign, annotator=second) is not None
    assert [entry.details["changes"] for entry in audit_entries(campaign)] == [
        {"is_open": [True, False]},
        {"is_open": [False, True]},
    ]


def test_a_removed_annotators_lease_goes_back_to_the_pool_and_the_counters_stay_exact(build_campaign, researcher):
    # One pair, one vote wanted: while the first holds it nobody else can have it.
    campaign, _models, _items, (first, second) = build_campaign(questions=2, models=2)
    voted = assignment_next(campaign=campaign, annotator=first)
    vote_cast(token=voted.token, annotator=first, choice="left")
    held = assignment_next(campaign=campaign, annotator=first)
    assert assignment_next(campaign=campaign, annotator=second) is None
    assert nothing_leased_reason(campaign=campaign, annotator=second) == WAIT

    changed = campaign_update(campaign=campaign, actor=researcher, changes={"annotators": ["annotator1"]})
    assert changed == {"annotators": [["annotator0", "annotator1"], ["annotator1"]]}
    [entry] = audit_entries(campaign)
    assert entry.details == {
        "fields": ["annotators"],
        "changes": changed,
        "added": [],
        "removed": ["annotator0"],
        "leases_returned": 1,
    }
    assert not Assignment.objects.filter(pk=held.pk).exists()
    # Their vote stays; the pair they held is the other annotator's now.
    assert Vote.objects.filter(annotator=first).count() == 1
    assert assignment_next(campaign=campaign, annotator=second).pair_id == held.pair_id
    assert counters_mismatches(campaign=campaign) == []
    with pytest.raises(AnnotationError, match="not assigned to you"):
        vote_cast(token=held.token, annotator=first, choice="left")


def test_an_annotator_added_part_way_gets_work_and_the_overlap_keeps_enough_annotators(build_campaign, researcher):
    campaign, _models, _items, (first, second) = build_campaign(questions=2, models=2, votes_per_pair=2)
    late = UserFactory(username="late", roles=["annotator"])
    elsewhere = Workspace.objects.create(slug="other", name="Other")
    UserFactory(username="stranger", roles=["annotator"], roles__workspace=elsewhere)
    with pytest.raises(AnnotationError, match="stranger"):
        campaign_update(campaign=campaign, actor=researcher, changes={"annotators": ["annotator0", "stranger"]})
    with pytest.raises(AnnotationError, match="2 votes per pair need at least 2 annotators; 1 would be left"):
        campaign_update(campaign=campaign, actor=researcher, changes={"annotators": ["annotator0"]})
    campaign_update(campaign=campaign, actor=researcher, changes={"annotators": ["annotator0", "annotator1", "late"]})
    assert assignment_next(campaign=campaign, annotator=late) is not None
    # Preview: what would change, in full, and nothing written.
    assert campaign_changes(campaign=campaign, changes={"annotators": ["annotator0", "late"]}) == {
        "annotators": (["annotator0", "annotator1", "late"], ["annotator0", "late"])
    }
    assert sorted(campaign.annotators.values_list("username", flat=True)) == ["annotator0", "annotator1", "late"]


def test_wait_for_others_rather_than_done_after_skips_while_others_hold_leases(build_campaign, client_as):
    campaign, _models, _items, (first, second) = build_campaign(questions=2, models=2)
    taken = assignment_next(campaign=campaign, annotator=second)
    mine = assignment_next(campaign=campaign, annotator=first)
    assignment_skip(token=mine.token, annotator=first)
    assert assignment_next(campaign=campaign, annotator=first) is None
    client = client_as(first)
    page = client.get(reverse("annotation:annotate", args=[campaign.slug])).content.decode()
    assert 'id="wait"' in page and "Come back later" in page and 'id="done"' not in page
    api = client.get(reverse("api-annotate-next", args=[campaign.slug]))
    assert api.status_code == 204 and api["Retry-After"] == "60"
    # Once the other votes on it, nothing is left for them: done.
    vote_cast(token=taken.token, annotator=second, choice="tie")
    assert nothing_leased_reason(campaign=campaign, annotator=first) == DONE
    page = client.get(reverse("annotation:annotate", args=[campaign.slug])).content.decode()
    assert 'id="done"' in page and 'id="wait"' not in page
    api = client.get(reverse("api-annotate-next", args=[campaign.slug]))
    assert api.status_code == 204 and "Retry-After" not in api


# ------------------------------------------------------------------------------------- the API


def test_the_api_reads_and_patches_a_campaign_with_its_field_names(build_campaign, client_as, researcher):
    campaign, _models, _items, _people = build_campaign(questions=2, models=2)
    UserFactory(username="late", roles=["annotator"])
    client = client_as(researcher)
    url = reverse("api-campaign", args=[campaign.slug])
    assert client.get(url).json() == {
        "slug": "blind",
        "title": "Blind test",
        "title_zh": "",
        "instructions_en": "",
        "instructions_zh": "",
        "is_open": True,
        "closed": False,
        "annotators": ["annotator0", "annotator1"],
    }
    change = {
        "title": "Round 2",
        "title_zh": "第二轮",
        "instructions_en": "Read both.",
        "instructions_zh": "请读完两个回答。",
        "is_open": False,
        "annotators": ["annotator1", "late"],
    }
    response = client.patch(url, change, content_type="application/json")
    assert response.status_code == 200
    body = response.json()
    assert {name: body[name] for name in change} == change
    assert body["changed"]["is_open"] == [True, False]
    [entry] = audit_entries(campaign)
    assert entry.details["via"] == "api" and entry.details["removed"] == ["annotator0"]
    assert sorted(entry.details["changes"]) == sorted(change)
    # Reopened by the same route; a field it does not take is refused, not ignored.
    assert client.patch(url, {"is_open": True}, content_type="application/json").json()["is_open"] is True
    refused = client.patch(url, {"votes_per_pair": 3, "title": "x"}, content_type="application/json")
    assert refused.status_code == 400 and "votes_per_pair" in refused.json()
    assert client.patch(url, {"title": ""}, content_type="application/json").status_code == 400
    campaign.refresh_from_db()
    assert (campaign.title, campaign.votes_per_pair, campaign.is_open) == ("Round 2", 1, True)


def test_the_api_also_takes_the_names_spec_gives(build_campaign, client_as, researcher):
    """SPEC.md names the same changes `closed` and `instructions`: both spellings work."""
    campaign, _models, _items, _people = build_campaign(questions=2, models=2)
    client = client_as(researcher)
    url = reverse("api-campaign", args=[campaign.slug])
    body = client.patch(url, {"closed": True, "instructions": "Read both."}, content_type="application/json").json()
    assert (body["is_open"], body["closed"], body["instructions_en"]) == (False, True, "Read both.")
    both = {"instructions": {"en": "Read them.", "zh": "请读完。"}, "closed": False}
    body = client.patch(url, both, content_type="application/json").json()
    assert (body["is_open"], body["instructions_en"], body["instructions_zh"]) == (True, "Read them.", "请读完。")
    for refused in ({"closed": True, "is_open": True}, {"instructions": {"fr": "Lisez."}}, {"instructions": 3}):
        response = client.patch(url, refused, content_type="application/json")
        assert response.status_code == 400, refused
    chinese = client.patch(
        url, {"closed": True, "is_open": True}, content_type="application/json", HTTP_ACCEPT_LANGUAGE="zh-hans"
    )
    assert chinese.json()["closed"] == ["closed 与 is_open 的取值相互矛盾。"]
    campaign.refresh_from_db()
    assert (campaign.is_open, campaign.instructions_en) == (True, "Read them.")


def test_annotators_and_other_workspaces_change_nothing(build_campaign, client_as):
    campaign, _models, _items, (first, _second) = build_campaign(questions=2, models=2)
    elsewhere = Workspace.objects.create(slug="other", name="Other")
    outsider = UserFactory(username="outsider", roles=["researcher"], roles__workspace=elsewhere)
    url = reverse("api-campaign", args=[campaign.slug])
    page = reverse("annotation:settings", args=[campaign.slug])
    close = {"action": "close", "confirm": "1"}

    client = client_as(first)
    assert client.patch(url, {"is_open": False}, content_type="application/json").status_code == 403
    assert client.post(page, close).status_code == 403
    client = client_as(outsider)
    missing = client.patch(
        reverse("api-campaign", args=["no-such"]), {"is_open": False}, content_type="application/json"
    )
    theirs = client.patch(url, {"is_open": False}, content_type="application/json")
    # Not found, saying no more than for a campaign that does not exist.
    assert (theirs.status_code, theirs.json()) == (missing.status_code, missing.json()) == (404, missing.json())
    assert "blind" not in theirs.content.decode() and "Blind" not in theirs.content.decode()
    assert client.get(url).status_code == 404
    assert client.post(page, close).status_code == 404
    campaign.refresh_from_db()
    assert campaign.is_open and audit_entries(campaign) == []


# ------------------------------------------------------------------------------------ the page


def test_the_page_shows_each_change_and_makes_it_only_once_confirmed(build_campaign, client_as, researcher):
    campaign, _models, _items, (first, _second) = build_campaign(questions=2, models=2)
    UserFactory(username="late", roles=["annotator"])
    client = client_as(researcher)
    results = client.get(reverse("annotation:results", args=[campaign.slug])).content.decode()
    settings_block = results.split('id="settings"', 1)[1].split("</section>", 1)[0]
    assert 'value="close"' in settings_block and '<option value="late">' in settings_block
    assert '<option value="annotator0">' not in settings_block
    assert "annotator0, annotator1" in settings_block
    url = reverse("annotation:settings", args=[campaign.slug])

    edit = {"action": "edit", "title": "Blind <b>2</b>", "title_zh": "", "instructions_en": "", "instructions_zh": ""}
    asked = client.post(url, edit)
    body = asked.content.decode()
    assert asked.status_code == 200 and "Are you sure?" in body and "Blind &lt;b&gt;2&lt;/b&gt;" in body
    assert 'name="confirm" value="1"' in body
    campaign.refresh_from_db()
    assert campaign.title == "Blind test" and audit_entries(campaign) == []
    done = client.post(url, {**edit, "confirm": "1"})
    assert done.status_code == 302 and done["Location"].endswith("#settings")
    campaign.refresh_from_db()
    assert campaign.title == "Blind <b>2</b>"

    for action, data in (("add", {"annotator": "late"}), ("remove", {"annotator": "annotator0"}), ("close", {})):
        assert "Are you sure?" in client.post(url, {"action": action, **data}).content.decode()
        client.post(url, {"action": action, **data, "confirm": "1"})
    campaign.refresh_from_db()
    assert not campaign.is_open
    assert sorted(campaign.annotators.values_list("username", flat=True)) == ["annotator1", "late"]
    assert [sorted(entry.details["fields"]) for entry in audit_entries(campaign)] == [
        ["title"],
        ["annotators"],
        ["annotators"],
        ["is_open"],
    ]
    # An empty title is shown again with the reason, nothing changed.
    refused = client.post(url, {**edit, "title": ""})
    assert refused.status_code == 400 and "This field is required." in refused.content.decode()
    # A removed annotator no longer reaches the campaign; the others are told it is closed.
    assert client_as(first).get(reverse("annotation:annotate", args=[campaign.slug])).status_code == 404


def test_a_closed_campaign_says_so_to_its_annotators(build_campaign, client_as, researcher):
    campaign, _models, _items, (first, _second) = build_campaign(questions=2, models=2, title_zh="盲测")
    Campaign.objects.filter(pk=campaign.pk).update(is_open=False)
    client = client_as(first)
    listed = client.get(reverse("annotation:index")).content.decode()
    assert "(closed: no new items)" in listed
    page = client.get(reverse("annotation:annotate", args=[campaign.slug])).content.decode()
    assert "This campaign is closed: it takes no new items." in page and 'id="done-closed"' in page
    chinese = client.get(reverse("annotation:annotate", args=[campaign.slug]), HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "此标注任务已关闭" in chinese.content.decode()
