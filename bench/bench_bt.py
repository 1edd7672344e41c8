"""Bradley-Terry bootstrap: aggregated-matrix resampling against refitting choix on resampled votes.

1,000,000 synthetic votes (15 % ties) over 100 models. Fast path: one fit on the dense win
matrix plus N multinomial redraws of the aggregated (pair, outcome) cells, each refitted with
choix.ilsr_pairwise_dense (stats/ranking.py). Usual path: resample the individual votes
with replacement and refit choix.ilsr_pairwise on the list of comparisons (ties entered as one
win each way with every decisive vote doubled, which is the half-win matrix times two, fitted
with alpha times two: the same estimate). Both paths' full-data estimates are compared (1e-6).
The usual path is slow, so it runs `--baseline-rounds` rounds and its per-round time is scaled.

    .venv/bin/python bench/bench_bt.py [--votes 1000000] [--models 100] [--rounds 100] [--baseline-rounds 2]
"""

import argparse
import sys
import time
from pathlib import Path

import choix
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from stats import ranking  # noqa: E402  (pure module, no Django)


def synthetic(votes, models, seed=0):
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, models)
    i = rng.integers(0, models, votes)
    j = (i + rng.integers(1, models, votes)) % models
    p = 1 / (1 + np.exp(strength[j] - strength[i]))
    u = rng.random(votes)
    outcome = np.where(u < 0.15, 2, np.where(rng.random(votes) < p, 0, 1))  # 0: i wins, 1: j wins, 2: tie
    return i, j, outcome


def counts_of(n, i, j, outcome):
    first, second = np.minimum(i, j), np.maximum(i, j)
    flipped = i > j
    o = np.where(outcome == 2, 2, np.where(flipped, 1 - outcome, outcome))
    key = (first * n + second) * 3 + o
    cells = np.bincount(key, minlength=n * n * 3).reshape(n * n, 3)
    used = np.flatnonzero(cells.sum(axis=1))
    return ranking.PairCounts(
        labels=[f"m{k}" for k in range(n)],
        first=used // n,
        second=used % n,
        first_wins=cells[used, 0],
        second_wins=cells[used, 1],
        ties=cells[used, 2],
    )


def as_list(i, j, outcome):
    data = []
    for a, b, o in zip(i.tolist(), j.tolist(), outcome.tolist()):
        if o == 0:
            data += [(a, b), (a, b)]
        elif o == 1:
            data += [(b, a), (b, a)]
        else:
            data += [(a, b), (b, a)]
    return data


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--votes", type=int, default=1_000_000)
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--baseline-rounds", type=int, default=2)
    parser.add_argument("--alpha", type=float, default=ranking.DEFAULT_ALPHA)
    args = parser.parse_args()
    n = args.models
    i, j, outcome = synthetic(args.votes, n)

    started = time.perf_counter()
    counts = counts_of(n, i, j, outcome)
    result = ranking.bradley_terry(counts, alpha=args.alpha, rounds=args.rounds, seed=1)
    fast = time.perf_counter() - started
    estimate = {s.label: s.score for s in result.scores}
    fast_vec = np.array([estimate[f"m{k}"] for k in range(n)])
    print(
        f"aggregated: fit + {args.rounds} bootstrap rounds in {fast:.2f} s ({fast / (args.rounds + 1) * 1000:.1f} ms per fit)",
        flush=True,
    )

    rng = np.random.default_rng(2)
    started = time.perf_counter()
    full = choix.ilsr_pairwise(n, as_list(i, j, outcome), alpha=2 * args.alpha, max_iter=10_000, tol=ranking.FIT_TOL)
    first_fit = time.perf_counter() - started
    print(f"usual: full-data fit on {2 * args.votes:,} listed comparisons in {first_fit:.1f} s", flush=True)
    per_round = []
    for r in range(args.baseline_rounds):
        started = time.perf_counter()
        pick = rng.integers(0, args.votes, args.votes)
        choix.ilsr_pairwise(
            n,
            as_list(i[pick], j[pick], outcome[pick]),
            alpha=2 * args.alpha,
            initial_params=full,
            max_iter=10_000,
            tol=ranking.FIT_TOL,
        )
        per_round.append(time.perf_counter() - started)
        print(f"usual: bootstrap round {r + 1}/{args.baseline_rounds} in {per_round[-1]:.1f} s", flush=True)
    usual = first_fit + np.mean(per_round) * args.rounds
    difference = float(np.max(np.abs(full - fast_vec)))
    print(f"usual (scaled to fit + {args.rounds} rounds from {args.baseline_rounds} measured): {usual:.0f} s")
    print(
        f"speed-up: {usual / fast:.0f}x; largest difference between the two full-data estimates: {difference:.2e}"
        f" ({'within' if difference < 1e-6 else 'NOT within'} 1e-6)"
    )


if __name__ == "__main__":
    main()
