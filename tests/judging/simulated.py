"""Simulated judges for the diagnostics tests: loopback replies whose biases are set by construction.

Answers carry a marker `ANS-<external id>-<model>` followed by filler, so a judge can tell from
its prompt which answers it was shown, in which order, and how long they are. Randomness comes
from a hash of the prompt (and a salt), so a run's verdicts are the same on every machine.
"""

import hashlib
import math
import re

from curation.choices import Intent, Language
from curation.models import Dataset, Item
from judging.models import Answer, CandidateModel

MARKER = re.compile(r"ANS-(\w+)-([\w.]+)")
PAIRWISE_FIRST = "[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}]"
PAIRWISE_SECOND = "[{'model': 'model_2', 'rank': 1}, {'model': 'model_1', 'rank': 2}]"


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def uniform(prompt: str, salt: str = "") -> float:
    """A number in [0, 1) fixed by the prompt: the judge's coin."""
    digest = hashlib.sha256(f"{salt}:{prompt}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def answer_text(external_id: str, model: str, length: int) -> str:
    """An answer of exactly `length` characters (at least the marker's) carrying its marker."""
    marker = f"ANS-{external_id}-{model} "
    return marker + "x" * max(0, length - len(marker))


def shown(prompt: str) -> list[tuple[str, str]]:
    """(external id, model) of the answers in the prompt, in the order shown."""
    return MARKER.findall(prompt)


def build_dataset(name: str, lengths: dict[str, list[int]], *, languages=None) -> Dataset:
    """A dataset with one item per position of the length lists; lengths[model][i] is that model's
    answer length on item i. languages: optional language per item (English by default)."""
    dataset = Dataset.objects.create(name=name)
    count = len(next(iter(lengths.values())))
    items = Item.objects.bulk_create(
        Item(
            dataset=dataset,
            external_id=f"q{i:03d}",
            question=f"Question {i}?",
            reference="A reference.",
            intent=Intent.FACTUAL_QA,
            language=(languages[i] if languages else Language.EN),
        )
        for i in range(count)
    )
    for model_name, per_item in lengths.items():
        model, _ = CandidateModel.objects.get_or_create(name=model_name)
        Answer.objects.bulk_create(
            Answer(item=item, model=model, text=answer_text(item.external_id, model_name, length))
            for item, length in zip(items, per_item)
        )
    return dataset


def position_length_judge(*, intercept: float, slope: float, lengths: dict[tuple[str, str], int], salt: str = ""):
    """A pairwise judge: logit P(first shown wins) = intercept + slope * (l1 - l2) / (l1 + l2)."""

    def reply(body):
        prompt = body["messages"][-1]["content"]
        first, second = shown(prompt)[:2]
        a, b = lengths[first], lengths[second]
        p_first = sigmoid(intercept + slope * (a - b) / (a + b))
        return PAIRWISE_FIRST if uniform(prompt, salt) < p_first else PAIRWISE_SECOND

    return reply


def expected_flip_rate(*, intercept: float, slope: float, pairs: list[tuple[int, int]]) -> float:
    """The flip rate the position-and-length judge has on these (candidate, reference) lengths:
    a flip is the first-shown answer winning both times, or the second-shown both times."""
    total = 0.0
    for a, b in pairs:
        z = (a - b) / (a + b)
        p_one, p_two = sigmoid(intercept + slope * z), sigmoid(intercept - slope * z)
        total += p_one * p_two + (1 - p_one) * (1 - p_two)
    return total / len(pairs)


def expected_first_rate(*, intercept: float, slope: float, pairs: list[tuple[int, int]]) -> float:
    """The share of verdicts won by the first position when every pair is judged both ways."""
    total = 0.0
    for a, b in pairs:
        z = (a - b) / (a + b)
        total += sigmoid(intercept + slope * z) + sigmoid(intercept - slope * z)
    return total / (2 * len(pairs))


def pointwise_judge(score_of, *, fail_when=None):
    """A pointwise judge: score_of(external_id, model, prompt) -> final score; `fail_when(prompt)`
    True makes an unparsable reply."""

    def reply(body):
        prompt = body["messages"][-1]["content"]
        if fail_when is not None and fail_when(prompt):
            return "I cannot decide."
        (external_id, model), *_ = shown(prompt)
        score = score_of(external_id, model, prompt)
        return f"Reasoning.\n{{'Factuality': {score}, 'Final Score': {score}}}"

    return reply


def candidate_strength_judge(*, theta: dict[str, float], phi: float, lengths: dict[tuple[str, str], int], sd, salt=""):
    """A pairwise judge by the length-controlled model itself: logit P(candidate wins) =
    theta[candidate] + phi * tanh((l_c - l_r) / sd[candidate]), whichever side it is shown on.

    The coin depends on the two answers only, not on the side the run's seed and row ids put
    them on, so the verdicts are the same whatever the database numbered."""

    def reply(body):
        prompt = body["messages"][-1]["content"]
        first, second = shown(prompt)[:2]
        candidate, reference = (first, second) if first[1] != "ref" else (second, first)
        model = candidate[1]
        p_candidate = sigmoid(theta[model] + phi * math.tanh((lengths[candidate] - lengths[reference]) / sd[model]))
        candidate_wins = uniform(f"{candidate}{reference}", salt) < p_candidate
        return PAIRWISE_FIRST if candidate_wins == (candidate == first) else PAIRWISE_SECOND

    return reply
