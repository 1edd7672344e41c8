"""A campaign's manifest: what its pairs were drawn from, recorded at creation, as a run's
(judging/runs/manifest.py) is: the dataset version and its content hash, each candidate's answers and
their hash, the design (fixed, or adaptive with its budget, uniform share and criterion) and its
seed, the Userbench version and the time."""

from django.utils import timezone

from annotation.design import CRITERION
from annotation.models import Campaign
from core import __version__
from judging.runs.manifest import dataset_entry, model_entry, text_hash
from stats.pairing import GAP_WEIGHT, PRIOR_SD

FORMAT = "userbench-campaign-manifest/1"


def _adaptive_design(campaign: Campaign) -> dict:
    """How an adaptive campaign chooses its pairs: what stats/pairing.py needs to be re-created."""
    return {
        "budget": campaign.budget,
        "pairs_planned": campaign.pairs_planned,
        "uniform_share": campaign.uniform_share,
        "criterion": CRITERION,
        "gap_weight": GAP_WEIGHT,
        "prior_sd": PRIOR_SD,
        "refresh": "after votes, in the background (debounced, as the stored figures)",
        "question_order": "(item id * a + b) mod 2147483647, a and b drawn per pair",
        "draw_seed": "random.Random(f'{seed}:{number of the pair drawn}')",
        "probabilities_recorded": "per pair (choice_probability, chosen_by) and per vote (choice_probability)",
    }


def campaign_manifest_build(*, campaign: Campaign) -> dict:
    """The manifest of a campaign just created (annotation.campaigns.campaign_create stores it)."""
    pinned = {answer_set.model_id: answer_set for answer_set in campaign.answer_sets.all()}
    return {
        "format": FORMAT,
        "userbench_version": __version__,
        "recorded_at": timezone.now().isoformat(),
        "campaign": campaign.slug,
        "dataset": dataset_entry(campaign.dataset),
        # The answers as the campaign pinned them (judging/answers/versions.py): which version of each.
        "candidates": [
            model_entry(model, campaign.dataset, pinned.get(model.pk)) for model in campaign.candidates.order_by("name")
        ],
        "design": {
            "question_count": campaign.question_count,
            "pairs_per_question": campaign.pairs_per_question,
            "pairs_drawn": campaign.pairs_drawn,
            "votes_per_pair": campaign.votes_per_pair,
            "gold_every": campaign.gold_every,
            "min_gold_accuracy": campaign.min_gold_accuracy,
            "lease_seconds": campaign.lease_seconds,
            "annotators": campaign.annotators.count(),
            "sampling": campaign.sampling,
            **(_adaptive_design(campaign) if campaign.is_adaptive else {}),
        },
        "instructions_hash": {"en": text_hash(campaign.instructions_en), "zh": text_hash(campaign.instructions_zh)},
        "seeds": {"pairs": campaign.seed},
    }


def manifest_instructions_changed(*, campaign: Campaign) -> None:
    """Note in the campaign's manifest that its instructions changed while it ran: when, and the
    new texts' hashes (the creation's hashes stay as recorded), so that a reader knows which
    votes were cast under which instructions. The caller saves the campaign."""
    if not campaign.manifest:
        return  # a campaign made before manifests has none to complete
    campaign.manifest.setdefault("instructions_changed", []).append(
        {
            "at": timezone.now().isoformat(),
            "en": text_hash(campaign.instructions_en),
            "zh": text_hash(campaign.instructions_zh),
        }
    )
