"""Hands the human votes to judging's run diagnostics (judging/results/human_votes.py), which cannot
import this app: registered at start-up by annotation/apps.py."""

from django.db.models import Count, Max

from annotation.models import Vote
from judging.results.human_votes import human_verdict_source, human_votes_marker_source


@human_verdict_source
def dataset_human_verdicts(*, dataset) -> dict[tuple[int, str, str], list[str]]:
    """The dataset's votes that count for statistics (gold pairs and annotators flagged in their
    campaign left out, cannot-determine dropped), per question and sorted model pair."""
    # report pulls in scipy.stats (~0.5 s); this module is imported at start-up to register.
    from annotation.report import vote_units

    return {unit: [label for _rater, label in ratings] for unit, ratings in vote_units(dataset=dataset).items()}


@human_votes_marker_source
def dataset_votes_marker(*, dataset) -> list:
    """The dataset's vote count and newest vote id: a vote cast, taken back or imported changes it."""
    counted = Vote.objects.filter(item__dataset=dataset).aggregate(n=Count("pk"), last=Max("pk"))
    return [counted["n"], counted["last"]]
