"""Simulated pairwise votes with known strengths and annotators of known care, for the reliability
tests and bench/bench_bt_coverage.py: numpy and stats/pairing.py only.

A careful annotator votes as bench/bench_adaptive_pairing.py's do: a tie with probability
4 * TIE * p * (1 - p), else a win for the first model with probability p - tie / 2, so a tie is half
a win each way on average. A careless one casts `noise` of their votes at random (first, second or
tie); a random one all of them; an adversarial one votes as a careful one with the models swapped.

Designs: "fixed" spreads the budget evenly over the model pairs (in a shuffled order), two or more
pairs per question; "adaptive" draws each pair from stats/pairing.py's design refitted on the
votes so far every `refresh` votes, as an adaptive campaign does.
"""

import numpy as np

from stats.pairing import all_pairs, draw_pair, pairing_design
from stats.reliability import AnnotatorVotes

TIE = 0.35
NOISE = 0.4
QUESTIONS = 200
CAREFUL, CARELESS, RANDOM, ADVERSARIAL = "careful", "careless", "random", "adversarial"


def vote(rng, theta, i, j, kind, noise=NOISE) -> int:
    """0: i won, 1: j won, 2: a tie."""
    if kind == RANDOM or (kind == CARELESS and rng.random() < noise):
        return int(rng.integers(3))
    gap = theta[i] - theta[j]
    p = 1 / (1 + np.exp(gap if kind == ADVERSARIAL else -gap))
    tie = 4 * TIE * p * (1 - p)
    draw = rng.random()
    return 2 if draw < tie else 0 if draw < tie + p - tie / 2 else 1


def simulate(
    theta,
    budget: int,
    *,
    kinds=(CARELESS, CAREFUL, CAREFUL, CAREFUL, CAREFUL),
    design: str = "fixed",
    seed: int = 0,
    noise: float = NOISE,
    refresh: int = 20,
    uniform_share: float = 0.2,
    questions: int = QUESTIONS,
) -> dict:
    """Votes as columns: first, second (model indices), outcome, annotator (index into kinds), question."""
    theta = np.asarray(theta, dtype=float)
    n = len(theta)
    rng = np.random.default_rng(seed)
    pairs = all_pairs(n)
    columns: dict[str, list[int]] = {"first": [], "second": [], "outcome": [], "annotator": [], "question": []}
    if design == "fixed":
        order = np.concatenate([rng.permutation(len(pairs)) for _ in range(budget // len(pairs) + 1)])[:budget]
    design_now = None
    per_question = max(1, budget // questions)
    for k in range(budget):
        if design == "fixed":
            pair = int(order[k])
            question = k // per_question
        else:
            if k % refresh == 0:
                counts = np.zeros((len(pairs), 3))
                index = {(int(a), int(b)): e for e, (a, b) in enumerate(pairs)}
                for a, b, o in zip(columns["first"], columns["second"], columns["outcome"], strict=True):
                    lo, hi = min(a, b), max(a, b)
                    counts[index[(lo, hi)], o if (a == lo or o == 2) else 1 - o] += 1
                design_now = pairing_design(
                    n,
                    pairs[:, 0],
                    pairs[:, 1],
                    counts[:, 0],
                    counts[:, 1],
                    counts[:, 2],
                    remaining=budget - k,
                    uniform_share=uniform_share,
                )
            drawn = draw_pair(
                design_now.uniform,
                design_now.information,
                uniform_share,
                branch_random=rng.random(),
                pick_random=rng.random(),
            )
            pair = drawn.pair
            question = int(rng.integers(questions))
        i, j = (int(pairs[pair, 0]), int(pairs[pair, 1]))
        if rng.random() < 0.5:
            i, j = j, i
        who = k % len(kinds)
        columns["first"].append(i)
        columns["second"].append(j)
        columns["outcome"].append(vote(rng, theta, i, j, kinds[who], noise))
        columns["annotator"].append(who)
        columns["question"].append(question)
    return {key: np.array(values, dtype=np.int64) for key, values in columns.items()}


def as_annotator_votes(votes: dict, n: int, annotators: int):
    """The simulated votes as stats.reliability.AnnotatorVotes."""
    return AnnotatorVotes(
        labels=[f"m{k}" for k in range(n)],
        annotators=[f"a{k}" for k in range(annotators)],
        annotator=votes["annotator"],
        first=votes["first"],
        second=votes["second"],
        outcome=votes["outcome"],
        question=votes["question"],
    )
