"""Style-controlled Bradley-Terry: stats/style.py against FastChat's style control, same votes.

Synthetic votes over `--models` models whose answers differ in length, headers, list items and
bold spans; the winner depends on the models' strengths and on the length ratio. Userbench: the
rows (model_a, model_b, winner, features of a, features of b) through `style_votes` and
`style_bradley_terry` (one fit plus `--rounds` bootstrap rounds). FastChat: the same votes as its
DataFrame (model_a, model_b, winner and conv_metadata with sum_assistant_a_tokens, header_count_a,
list_count_a, bold_count_a and their _b twins, as Arena's battles carry them) through
`compute_style_control` and `compute_bootstrap_style_control` of
fastchat/serve/monitor/rating_systems.py (scipy's L-BFGS per round on every vote, rounds in a
process pool over every core). Both start from per-vote Python values; building FastChat's
DataFrame is not timed. The two normalise the style features differently (stats/style.py's
docstring says why), so only the times are compared, and the rank correlation of the two
orderings is printed as a sanity check.

FastChat's interpreter is found as in bench_bt.py (see bench/README.md); without one, only
Userbench's side is timed.

    .venv/bin/python bench/bench_style.py [--votes 100000] [--models 50] [--rounds 100] [--small 2000x10]
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.bench_bt import comparison_main, run_fastchat  # noqa: E402
from stats.style import style_bradley_terry  # noqa: E402
from stats.style_votes import style_votes  # noqa: E402

FEATURES = ("length", "headers", "list_items", "bold")
FASTCHAT_KEYS = ("sum_assistant_{}_tokens", "header_count_{}", "list_count_{}", "bold_count_{}")

FASTCHAT_STYLE = """
import json, sys, time
import numpy as np, pandas as pd
from fastchat.serve.monitor.rating_systems import compute_style_control, compute_bootstrap_style_control
data = np.load(sys.argv[1], allow_pickle=True)
rounds, repeats = int(sys.argv[2]), int(sys.argv[3])
keys = ("sum_assistant_{}_tokens", "header_count_{}", "list_count_{}", "bold_count_{}")
fa, fb = data["fa"].tolist(), data["fb"].tolist()
meta = [
    {**{k.format("a"): v for k, v in zip(keys, a)}, **{k.format("b"): v for k, v in zip(keys, b)}}
    for a, b in zip(fa, fb)
]
names = {"a": "model_a", "b": "model_b", "tie": "tie"}
df = pd.DataFrame(
    {"model_a": data["a"], "model_b": data["b"], "winner": [names[w] for w in data["w"]], "conv_metadata": meta}
)
times = []
for _ in range(repeats):
    started = time.perf_counter()
    ratings, params = compute_style_control(df)
    fitted = time.perf_counter()
    compute_bootstrap_style_control(df, num_round=rounds)
    times.append((fitted - started, time.perf_counter() - fitted))
print(json.dumps({"times": times, "ratings": {k: float(v) for k, v in ratings.items()}}))
"""


def synthetic(
    votes: int, models: int, seed: int = 0
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Labels, model_a, model_b, winner (object arrays) and the (votes, 4) integer features of a and b."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 0.7, models)
    typical_length = rng.lognormal(np.log(600), 0.4, models)
    markdown = rng.uniform(0, 4, models)
    i = rng.integers(0, models, votes)
    j = (i + rng.integers(1, models, votes)) % models

    def answers(model):
        length = np.maximum(1, rng.lognormal(np.log(typical_length[model]), 0.3)).astype(np.int64)
        counts = rng.poisson(markdown[model][:, None] * np.ones((1, 3)))
        return np.column_stack([length, counts])

    fa, fb = answers(i), answers(j)
    ratio = (fa[:, 0] - fb[:, 0]) / (fa[:, 0] + fb[:, 0])
    p = 1 / (1 + np.exp(-(strength[i] - strength[j] + 1.5 * ratio)))
    outcome = np.where(rng.random(votes) < 0.1, 2, np.where(rng.random(votes) < p, 0, 1))
    labels = np.array([f"model-{k:03d}" for k in range(models)], dtype=object)
    winners = np.array(["a", "b", "tie"], dtype=object)
    return labels.tolist(), labels[i], labels[j], winners[outcome], fa, fb


def time_ours(labels, model_a, model_b, winner, fa, fb, rounds: int, repeats: int):
    best = None
    for _ in range(repeats):
        started = time.perf_counter()
        rows = zip(
            model_a.tolist(),
            model_b.tolist(),
            winner.tolist(),
            (dict(zip(FEATURES, values)) for values in fa.tolist()),
            (dict(zip(FEATURES, values)) for values in fb.tolist()),
        )
        votes = style_votes(labels, rows)
        collected = time.perf_counter()
        result = style_bradley_terry(votes, rounds=rounds, seed=0)
        finished = time.perf_counter()
        if best is None or finished - started < sum(best):
            best = (collected - started, finished - collected)
    return best, result


def rank_correlation(ours: dict, theirs: dict) -> float:
    labels = sorted(ours)
    a = np.argsort(np.argsort([ours[label] for label in labels]))
    b = np.argsort(np.argsort([theirs[label] for label in labels]))
    return float(np.corrcoef(a, b)[0, 1])


def compare(votes: int, models: int, rounds: int, repeats: int, python: str | None) -> None:
    labels, model_a, model_b, winner, fa, fb = synthetic(votes, models)
    (collect_s, fit_s), result = time_ours(labels, model_a, model_b, winner, fa, fb, rounds, repeats)
    ours = collect_s + fit_s
    print(
        f"{votes:>9,} votes, {models} models, fit + {rounds} rounds: Userbench {ours:6.2f} s "
        f"(collecting the rows {collect_s:.2f} s, fit and bootstrap {fit_s:.2f} s)",
        flush=True,
    )
    if python is None:
        return
    arrays = {"a": model_a, "b": model_b, "w": winner, "fa": fa, "fb": fb}
    answer = run_fastchat(python, FASTCHAT_STYLE, arrays, rounds, repeats)
    fit_t, boot_t = min(answer["times"], key=sum)
    theirs = fit_t + boot_t
    scores = {s.label: s.score for s in result.scores}
    print(
        f"{'':>9}  FastChat {theirs:6.2f} s (compute_style_control {fit_t:.2f} s, "
        f"compute_bootstrap_style_control {boot_t:.2f} s): Userbench {theirs / ours:.1f}x faster; "
        f"rank correlation of the two orderings {rank_correlation(scores, answer['ratings']):.3f}",
        flush=True,
    )


def main():
    comparison_main(
        doc=__doc__,
        votes=100_000,
        models=50,
        small="2000x10",
        repeats=2,
        # scipy's optimisers and sparse matrices load before anything is timed.
        warm_up=lambda: time_ours(*synthetic(300, 4), rounds=2, repeats=1),
        compare=compare,
    )


if __name__ == "__main__":
    main()
