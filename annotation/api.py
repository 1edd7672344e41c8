from rest_framework import serializers
from rest_framework.generics import ListAPIView

from annotation.access import ResearcherPermission
from annotation.selectors import campaign_list_with_counts


class CampaignListApi(ListAPIView):
    """Campaigns for researchers. Annotators' own endpoints never carry model identities."""

    permission_classes = [ResearcherPermission]

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "Campaign"

        slug = serializers.SlugField()
        title = serializers.CharField()
        dataset = serializers.CharField(source="dataset.name")
        votes_per_pair = serializers.IntegerField()
        is_open = serializers.BooleanField()
        pair_count = serializers.IntegerField()
        vote_count = serializers.IntegerField()

    serializer_class = OutputSerializer

    def get_queryset(self):
        return campaign_list_with_counts()
