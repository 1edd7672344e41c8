"""Adaptive campaigns: each new pair is chosen from the votes so far (stats/pairing.py says how).

Two halves, as every statistic of the app is split (core/figures.py): annotation/design.py
computes the campaign's design in the background after votes and stores, per model pair, the
probability that a new pair is that pair; `pair_draw` here runs inside `assignment_next` when no
pair drawn earlier has a free slot for the annotator. It costs a fixed number of queries whatever
the campaign's size: one to count the annotator's drawn pairs nobody voted on, one to take a slot
of the budget, one to read the stored design, one to read the model pairs with no question left
(annotation.models.ModelPairSlots), one to find an unused question for the model pair drawn, one
to write the pair and one to count it. An annotator is told there is nothing left only when no
model pair has a question left (or the budget is spent), however many are used up.

A new pair is a question that no pair of the campaign (gold pairs included) has shown with the
same two models, so nobody sees the same question with the same two models twice; its models
are stored in id order (the screen sides are drawn per assignment, as for every pair). Slots,
overlap, leases, skips, gold pairs and undo then work on it exactly as on a pair drawn at
creation. Each draw is seeded by the campaign's seed and the draw's number: one annotator's
sequence is reproducible, and concurrent annotators only change which draw each of them gets.
"""

from __future__ import annotations

import random

from annotation import leasing
from annotation.design import DESIGN_ROUNDS, DESIGN_WHAT
from annotation.figures import figures_key, figures_read
from annotation.models import Campaign, ComparisonPair, StoredFigures
from stats.pairing import all_pairs, draw_pair

# Model pairs tried per draw. The model pairs with no question left are read first and never
# drawn, so the first try finds a question; the others are a guard should those counts be wrong.
MAX_ATTEMPTS = 3
# The most pairs an annotator's requests may have drawn that nobody has voted on yet: one who
# skips cannot draw the budget ahead of the votes (nor choose among many drawn pairs).
MAX_DRAWN_UNVOTED = 3
# The order in which a model pair's unused questions are tried is (item id * a + b) mod PRIME,
# a and b drawn per draw: a random order of the questions that the database sorts by itself.
PRIME = 2_147_483_647


def design_key(campaign: Campaign) -> str:
    """The key of a campaign's stored design (annotation.figures keys every stored row so)."""
    return figures_key(DESIGN_WHAT, campaign=campaign, rounds=DESIGN_ROUNDS, seed=0)


def _stored_design(campaign: Campaign) -> dict | None:
    """The campaign's stored design as the background last computed it (one query); computed now
    only when there is none yet, which campaign_create makes unlikely."""
    payload = StoredFigures.objects.filter(key=design_key(campaign)).values_list("payload", flat=True).first()
    if payload:
        return payload
    payload, _freshness = figures_read(
        what=DESIGN_WHAT, campaign=campaign, rounds=DESIGN_ROUNDS, seed=0, compute="missing"
    )
    return payload


def pair_draw(*, campaign: Campaign, annotator_id: int) -> ComparisonPair | None:
    """A new pair for an adaptive campaign, chosen by its stored design, with its question and
    both answers' texts; None when the budget is spent, when no model pair has an unused question,
    or when this annotator's requests already drew MAX_DRAWN_UNVOTED pairs that nobody has voted
    on yet (they skipped them: the budget waits for votes instead of being drawn ahead of them).
    Call inside the transaction of assignment_next (the budget's slot is taken under the
    campaign's row lock, so draws take turns and never pick the same question twice)."""
    if leasing.drawn_unvoted(campaign_id=campaign.pk, annotator_id=annotator_id, limit=MAX_DRAWN_UNVOTED) >= (
        MAX_DRAWN_UNVOTED
    ):
        return None
    number = leasing.budget_slot_take(campaign_id=campaign.pk, pairs_planned=campaign.pairs_planned)
    if number is None:
        return None
    design = _stored_design(campaign)
    if not design or not design.get("uniform"):
        leasing.budget_slot_return(campaign_id=campaign.pk)
        return None
    model_ids = design["models"]
    pairs = all_pairs(len(model_ids))
    # Model pairs with no question left are never drawn: read under the campaign's row lock, so
    # the first model pair drawn has a question (one query, however many model pairs are used up).
    used_up = leasing.model_pairs_used_up(campaign_id=campaign.pk)
    excluded = [k for k, (i, j) in enumerate(pairs) if tuple(sorted((model_ids[i], model_ids[j]))) in used_up]
    rng = random.Random(f"{campaign.seed}:{number}")
    for _attempt in range(MAX_ATTEMPTS):
        try:
            drawn = draw_pair(
                design["uniform"],
                design["information"],
                design["uniform_share"],
                branch_random=rng.random(),
                pick_random=rng.random(),
                excluded=excluded,
            )
        except ValueError:
            break  # every model pair was tried
        model_a, model_b = (model_ids[k] for k in pairs[drawn.pair])
        pair = leasing.unused_question_pair(
            campaign_id=campaign.pk,
            dataset_id=campaign.dataset_id,
            model_a_id=model_a,
            model_b_id=model_b,
            order=(rng.randrange(1, PRIME), rng.randrange(PRIME), PRIME),
        )
        if pair is None:
            # The counts said otherwise (a campaign made before they were kept): now they know.
            leasing.model_pair_drawn(campaign_id=campaign.pk, model_ids=(model_a, model_b), used_up=True)
            excluded.append(drawn.pair)
            continue
        pair.campaign_id = campaign.pk
        pair.choice_probability = drawn.probability
        pair.chosen_by = drawn.chosen_by
        pair.drawn_by_id = annotator_id
        texts = pair.answer_a_text, pair.answer_b_text
        pair.save(force_insert=True)
        pair.answer_a_text, pair.answer_b_text = texts
        leasing.model_pair_drawn(campaign_id=campaign.pk, model_ids=(model_a, model_b))
        return pair
    leasing.budget_slot_return(campaign_id=campaign.pk)
    return None
