"""The counters kept with every vote, undo and skip (annotation/leasing.py) checked against what
they count. It counts a campaign's every assignment, so it never runs on an annotator's request:
it is for the tests, the load benchmark and an operator who doubts a figure."""

from collections import Counter

from django.db.models import Count, Q

from annotation.models import (
    AnnotatorTally,
    Assignment,
    Campaign,
    CampaignTally,
    ComparisonPair,
    ModelPairSlots,
)


def counters_mismatches(*, campaign: Campaign) -> list[str]:
    """Every counter of the campaign that differs from a count of its assignments and pairs, as
    "what: counted X, kept Y"; empty when all agree."""
    wrong: list[str] = []
    voted = Count("assignments", filter=Q(assignments__status=Assignment.Status.VOTED))
    for pair in campaign.pairs.annotate(real=voted).only("pk", "is_gold", "votes_cast", "needs_votes"):
        if pair.real != pair.votes_cast:
            wrong.append(f"pair {pair.pk} votes: counted {pair.real}, kept {pair.votes_cast}")
        needs = not pair.is_gold and pair.real < campaign.votes_per_pair
        if needs != pair.needs_votes:
            wrong.append(f"pair {pair.pk} needs votes: counted {needs}, kept {pair.needs_votes}")
    real = (
        Assignment.objects.filter(pair__campaign=campaign)
        .values("annotator_id")
        .annotate(
            voted=Count("pk", filter=Q(status=Assignment.Status.VOTED)),
            gold_voted=Count("pk", filter=Q(status=Assignment.Status.VOTED, pair__is_gold=True)),
            released=Count("pk", filter=Q(status=Assignment.Status.RELEASED)),
        )
    )
    fields = ("voted", "gold_voted", "released")
    counted = {
        row["annotator_id"]: {"voted": row["voted"], "gold_voted": row["gold_voted"], "released": row["released"]}
        for row in real
    }
    kept = {
        row["annotator_id"]: {name: row[name] for name in fields}
        for row in AnnotatorTally.objects.filter(campaign=campaign).values("annotator_id", *fields)
    }
    zero = {"voted": 0, "gold_voted": 0, "released": 0}
    for person in sorted(set(counted) | set(kept)):
        if counted.get(person, zero) != kept.get(person, zero):
            wrong.append(f"annotator {person}: counted {counted.get(person, zero)}, kept {kept.get(person, zero)}")
    ordinary = Assignment.objects.filter(
        pair__campaign=campaign, pair__is_gold=False, status=Assignment.Status.VOTED
    ).count()
    shards = sum(CampaignTally.objects.filter(campaign=campaign).values_list("votes", flat=True))
    if ordinary != shards:
        wrong.append(f"campaign votes: counted {ordinary}, kept {shards}")
    if campaign.is_adaptive:
        rows = ComparisonPair.objects.filter(campaign=campaign).values_list("item_id", "model_a_id", "model_b_id")
        distinct = {(item, min(a, b), max(a, b)) for item, a, b in rows}
        shown = Counter((a, b) for _item, a, b in distinct)
        for slots in ModelPairSlots.objects.filter(campaign=campaign):
            key = (slots.model_a_id, slots.model_b_id)
            if shown[key] != slots.drawn:
                wrong.append(f"model pair {key} questions drawn: counted {shown[key]}, kept {slots.drawn}")
    return wrong
