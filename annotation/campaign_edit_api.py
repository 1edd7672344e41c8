"""A campaign read and changed while it runs, through the API: `GET` and `PATCH
/api/campaigns/<slug>/` with the campaign's own field names (annotation/campaign_edits.py makes
the change, audited as the page's are)."""

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import ResearcherPermission, researcher_campaign
from annotation.campaign_edits import MAX_INSTRUCTIONS, MAX_TITLE, TEXT_FIELDS, campaign_update
from annotation.models import Campaign


class CampaignDetailApi(APIView):
    """A campaign's title, instructions, state and annotators (GET), and a change of any of them
    while it runs (PATCH): `is_open` false closes it (no new leases; votes on items already leased
    still count), true reopens it; `annotators` is the whole list of user names after the change
    (a removed annotator's leases go back to the pool). Researchers of the campaign's workspace
    only; another workspace's campaign is not found."""

    permission_classes = [ResearcherPermission]

    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "CampaignChange"

        title = serializers.CharField(max_length=MAX_TITLE, required=False)
        title_zh = serializers.CharField(max_length=MAX_TITLE, required=False, allow_blank=True)
        instructions_en = serializers.CharField(max_length=MAX_INSTRUCTIONS, required=False, allow_blank=True)
        instructions_zh = serializers.CharField(max_length=MAX_INSTRUCTIONS, required=False, allow_blank=True)
        is_open = serializers.BooleanField(required=False, help_text="false closes the campaign; true reopens it.")
        annotators = serializers.ListField(
            child=serializers.CharField(max_length=150),
            required=False,
            help_text="Every annotator's user name, the whole list after the change.",
        )
        # SPEC.md's names for the same fields, for scripts written against it.
        closed = serializers.BooleanField(required=False, help_text="true closes the campaign (is_open false).")
        instructions = serializers.JSONField(
            required=False, help_text='The English instructions as a string, or {"en": ..., "zh": ...}.'
        )

        def validate(self, attrs: dict) -> dict:
            if "closed" in attrs:
                closed = attrs.pop("closed")
                if "is_open" in attrs and attrs["is_open"] == closed:
                    raise serializers.ValidationError({"closed": [_("closed and is_open say opposite things.")]})
                attrs["is_open"] = not closed
            if "instructions" in attrs:
                given = attrs.pop("instructions")
                texts = {"en": given} if isinstance(given, str) else given
                if not isinstance(texts, dict) or not set(texts) <= {"en", "zh"}:
                    raise serializers.ValidationError({"instructions": [_('A string, or {"en": ..., "zh": ...}.')]})
                for language, text in texts.items():
                    field = serializers.CharField(max_length=MAX_INSTRUCTIONS, allow_blank=True)
                    attrs[f"instructions_{language}"] = field.run_validation(text)
            return attrs

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "CampaignSettings"

        slug = serializers.SlugField()
        title = serializers.CharField()
        title_zh = serializers.CharField()
        instructions_en = serializers.CharField()
        instructions_zh = serializers.CharField()
        is_open = serializers.BooleanField()
        closed = serializers.BooleanField()
        annotators = serializers.ListField(child=serializers.CharField())
        changed = serializers.DictField(
            child=serializers.ListField(),
            required=False,
            help_text="PATCH: each changed field's value before and after, as the audit log keeps it.",
        )

    def _shown(self, campaign: Campaign, changed: dict | None = None) -> Response:
        shown = {name: getattr(campaign, name) for name in ("slug", *TEXT_FIELDS, "is_open")}
        shown["closed"] = not campaign.is_open
        shown["annotators"] = sorted(campaign.annotators.values_list("username", flat=True))
        if changed is not None:
            shown["changed"] = changed
        return Response(self.OutputSerializer(shown).data)

    @extend_schema(responses=OutputSerializer)
    def get(self, request, slug):
        return self._shown(researcher_campaign(slug, request.user))

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def patch(self, request, slug):
        campaign = researcher_campaign(slug, request.user)
        given = self.InputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        # Unknown fields are refused, not ignored: a typo must not look like a change made.
        unknown = sorted(set(request.data) - set(given.fields))
        if unknown:
            raise serializers.ValidationError({name: [_("This cannot be changed here.")] for name in unknown})
        changed = campaign_update(campaign=campaign, actor=request.user, changes=dict(given.validated_data), via="api")
        campaign.refresh_from_db()
        return self._shown(campaign, changed)
