"""The annotation page: skip and undo have keys, the campaign's progress is a bar, and a skip is
acknowledged even when the request comes twice."""

import pytest
from django.urls import reverse

from annotation.models import Assignment, Vote, Winner
from annotation.services import assignment_next, vote_cast

pytestmark = pytest.mark.django_db


def test_keys_progress_bar_and_a_double_skip(build_campaign, client):
    campaign, models, items, (person, other) = build_campaign(questions=3, models=2, votes_per_pair=2)
    vote_cast(token=assignment_next(campaign=campaign, annotator=other).token, annotator=other, choice="tie")
    client.force_login(person)
    url = reverse("annotation:annotate", args=[campaign.slug])
    page = client.get(url).text
    skip = reverse("annotation:skip", args=[campaign.slug])
    assert f'formaction="{skip}" formnovalidate data-key="s">Skip this item <kbd>S</kbd></button>' in page
    assert '<progress id="campaign-progress" max="6" value="1">16%</progress>' in page
    assert "Campaign progress: 1 of 6 votes" in page
    token = Assignment.objects.get(annotator=person, status="leased").token
    # A double click sends the skip twice: both are acknowledged, nothing else happens.
    for _ in range(2):
        response = client.post(skip, {"token": token}, follow=True)
        assert [str(m) for m in response.context["messages"]] == ["Skipped. You will not see this item again."]
    assert "You skipped 1 item." in response.text
    assert Assignment.objects.filter(annotator=person, status="released").count() == 1
    vote_cast(token=assignment_next(campaign=campaign, annotator=person).token, annotator=person, choice="left")
    page = client.get(url).text
    assert 'data-key="u">Undo my last vote <kbd>U</kbd></button>' in page


@pytest.mark.parametrize(
    ("language", "saved", "refused"),
    [
        ("en", "Vote saved.", "You have already voted differently on this item: undo your vote to change it."),
        ("zh-hans", "投票已保存。", "您已对此条目投了不同的票：如需更改，请先撤销投票。"),
    ],
)
def test_the_page_answers_a_second_vote_with_another_choice(build_campaign, client, language, saved, refused):
    """The page sent again with another choice (the back button, a second tab): the annotator is
    told the first vote stands, not "Vote saved."; the same choice again is a double click."""
    campaign, models, items, (person, _) = build_campaign(questions=2, models=2)
    client.force_login(person)
    client.cookies["django_language"] = language
    client.get(reverse("annotation:annotate", args=[campaign.slug]))
    token = Assignment.objects.get(annotator=person, status="leased").token
    url = reverse("annotation:vote", args=[campaign.slug])

    def send(choice):
        response = client.post(url, {"token": token, "choice": choice}, follow=True)
        return [(m.level_tag, str(m)) for m in response.context["messages"]]

    assert send("left") == [("success", saved)]
    assert send("left") == [("success", saved)]
    assert send("right") == [("error", refused)]
    [vote] = Vote.objects.filter(annotator=person)
    left = Assignment.objects.get(token=token).model_a_on_left
    assert vote.winner == (Winner.MODEL_A if left else Winner.MODEL_B)  # the first choice stands
