"""Reads of campaigns and votes for pages and the API. Nothing here names a model to annotators."""

from django.db.models import Count, Q, QuerySet

from annotation.models import Campaign


def campaign_list_with_counts() -> QuerySet[Campaign]:
    """Campaigns with their pair and vote counts, for researchers."""
    return (
        Campaign.objects.select_related("dataset")
        .annotate(pair_count=Count("pairs", distinct=True), vote_count=Count("votes", distinct=True))
        .order_by("-created_at")
    )


def campaigns_for_annotator(user) -> QuerySet[Campaign]:
    """Open campaigns the annotator belongs to, with how many votes they have cast in each."""
    return (
        Campaign.objects.filter(annotators=user, is_open=True)
        .annotate(
            pair_count=Count("pairs", distinct=True),
            my_vote_count=Count("votes", filter=Q(votes__annotator=user), distinct=True),
        )
        .only("slug", "title")
        .order_by("title")
    )
