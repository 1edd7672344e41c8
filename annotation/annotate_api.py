"""The annotator's API: the next blind pair, a vote, a skip, an undo. It carries only assignment
tokens and rendered text, never a model's name or id.

A vote may ask for the annotator's next pair in its answer (`?next=1`): the same lease and the
same answer as `GET next/`, one request a round instead of two. A request's own work (its
session, its user, its throttle count, its campaign: 4 of a round's 26 statements, and Django's
and DRF's per-request work) is then paid once a round (bench/README.md, "A vote's cost")."""

from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import APIException
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import AnnotatorPermission, annotator_campaign
from annotation.models import Campaign
from annotation.selectors import annotator_progress, assignment_display
from annotation.services import (
    CHOICES,
    CLOSED,
    WAIT,
    assignment_next,
    assignment_skip,
    nothing_leased_reason,
    vote_cast,
    vote_undo,
)

# The most a client told to come back later waits before asking again.
RETRY_AFTER_SECONDS = 60


class ShownPairSerializer(serializers.Serializer):
    class Meta:
        ref_name = "BlindPair"

    token = serializers.CharField(help_text="Random per assignment; identifies nothing else.")
    question_html = serializers.CharField()
    left_html = serializers.CharField(help_text="Answer A, sanitised HTML.")
    right_html = serializers.CharField(help_text="Answer B, sanitised HTML.")
    language = serializers.CharField()
    leased_until = serializers.DateTimeField()


class NextPairSerializer(serializers.Serializer):
    class Meta:
        ref_name = "NextPair"

    pair = ShownPairSerializer()
    voted = serializers.IntegerField()
    skipped = serializers.IntegerField(help_text="Items this annotator skipped.")
    pairs = serializers.IntegerField()
    can_undo = serializers.BooleanField()
    campaign_votes = serializers.IntegerField(help_text="Votes on the campaign's ordinary pairs, by everyone.")
    wanted = serializers.IntegerField(help_text="Votes the campaign wants: pairs x votes per pair.")
    percent = serializers.IntegerField(help_text="campaign_votes as a whole percentage of wanted.")


class CampaignClosed(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = gettext_lazy("This campaign is closed: it takes no new items.")
    default_code = "campaign_closed"


def next_for(*, campaign: Campaign, annotator) -> tuple[dict | None, str, int | None]:
    """The annotator's next pair, leased to them, as `next/` answers it: (the pair with the
    progress line, "", None), or (None, why nothing: CLOSED, WAIT or DONE, the seconds to wait
    before asking again when WAIT)."""
    assignment = assignment_next(campaign=campaign, annotator=annotator)
    if assignment is None:
        reason = nothing_leased_reason(campaign=campaign, annotator=annotator)
        # A lease that runs out is offered again; a few minutes' wait is about a lease's worth.
        retry_after = min(campaign.lease_seconds, RETRY_AFTER_SECONDS) if reason == WAIT else None
        return None, reason, retry_after
    return (
        next_pair_data(
            assignment_display(assignment=assignment), annotator_progress(campaign=campaign, annotator=annotator)
        ),
        "",
        None,
    )


# One field instance for every request: a serializer instance deep-copies its declared fields,
# 6 % of the web's work a round under cProfile (bench/bench_round_cpu.py --profile).
_LEASED_UNTIL = serializers.DateTimeField()


def next_pair_data(shown: dict, progress: dict) -> dict:
    """What NextPairSerializer writes of the pair shown and the progress line, written directly
    (tests/annotation/test_vote_then_next.py holds the two equal)."""
    pair = {name: str(shown[name]) for name in ("token", "question_html", "left_html", "right_html", "language")}
    pair["leased_until"] = _LEASED_UNTIL.to_representation(shown["leased_until"])
    data: dict = {"pair": pair}
    for name in NextPairSerializer._declared_fields:
        if name != "pair":
            data[name] = bool(progress[name]) if name == "can_undo" else int(progress[name])
    return data


class NextPairApi(APIView):
    """The annotator's current item, leased to them. 204 when nothing is left for them; 204 with
    a Retry-After header (seconds) when the items left are leased to others and may come back to
    them; 409 when the campaign is closed and they hold no item (one held when it closed is
    still offered, and its vote counts)."""

    permission_classes = [AnnotatorPermission]

    @extend_schema(responses={200: NextPairSerializer, 204: None, 409: None})
    def get(self, request, slug):
        campaign = annotator_campaign(request.user, slug)
        shown, reason, retry_after = next_for(campaign=campaign, annotator=request.user)
        if shown is not None:
            return Response(shown)
        if reason == CLOSED:
            raise CampaignClosed()
        response = Response(status=status.HTTP_204_NO_CONTENT)
        if retry_after is not None:
            response["Retry-After"] = str(retry_after)
        return response


THEN_NEXT = OpenApiParameter(
    "next",
    str,
    enum=["1"],
    description=(
        "1: lease the annotator's next pair after the vote and answer it in `next`, as GET next/ would "
        "(null, with `next_reason` done, wait or closed, when it would answer 204 or 409)."
    ),
)


class VoteApi(APIView):
    """Vote on the leased item. Sending the same token again stores nothing new (200, not 201).
    With `?next=1` the answer carries the annotator's next pair as well."""

    permission_classes = [AnnotatorPermission]

    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "VoteInput"

        token = serializers.CharField(max_length=32)
        choice = serializers.ChoiceField(choices=CHOICES)
        comment = serializers.CharField(max_length=2000, required=False, allow_blank=True, default="")

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "VoteStored"

        stored = serializers.BooleanField()
        created = serializers.BooleanField()
        next = NextPairSerializer(required=False, allow_null=True, help_text="Only with ?next=1.")
        next_reason = serializers.ChoiceField(
            choices=["", "done", "wait", "closed"],
            required=False,
            help_text="Only with ?next=1: why `next` is null (empty when it is not).",
        )
        retry_after = serializers.IntegerField(
            required=False, allow_null=True, help_text="Only with ?next=1 and next_reason wait: seconds."
        )

    @extend_schema(
        request=InputSerializer, parameters=[THEN_NEXT], responses={201: OutputSerializer, 200: OutputSerializer}
    )
    def post(self, request, slug):
        campaign = annotator_campaign(request.user, slug)
        given = self.InputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        _vote, created = vote_cast(campaign=campaign, annotator=request.user, **given.validated_data)
        data: dict = {"stored": True, "created": created}
        if request.query_params.get("next") == "1":
            shown, reason, retry_after = next_for(campaign=campaign, annotator=request.user)
            data.update(next=shown, next_reason=reason, retry_after=retry_after)
        return Response(data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class SkipApi(APIView):
    """Give the leased item back; the annotator never sees it again."""

    permission_classes = [AnnotatorPermission]

    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "SkipInput"

        token = serializers.CharField(max_length=32)

    @extend_schema(request=InputSerializer, responses={204: None})
    def post(self, request, slug):
        campaign = annotator_campaign(request.user, slug)
        given = self.InputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        assignment_skip(campaign=campaign, annotator=request.user, token=given.validated_data["token"])
        return Response(status=status.HTTP_204_NO_CONTENT)


class UndoApi(APIView):
    """Take back the latest vote; its item is leased to the annotator again."""

    permission_classes = [AnnotatorPermission]

    @extend_schema(request=None, responses={204: None})
    def post(self, request, slug):
        campaign = annotator_campaign(request.user, slug)
        vote_undo(campaign=campaign, annotator=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
