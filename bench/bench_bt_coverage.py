"""Do the 95 % intervals cover the true strengths? Plain Bradley-Terry against the reliability-aware
fit (stats/reliability.py), on simulated votes with one careless annotator in five.

The truth: ChineseAlpacaEval's published strengths (../shared/data/chinese_alpaca_eval/leaderboard.csv,
read in place, as bench/bench_adaptive_pairing.py reads them: each model's win rate against
text-davinci-003 as log-odds), 8 models (400 votes) and 20 models (1,000 votes), as published and
spread --wide (2.5) times. Five annotators take turns on 200 questions; one of them casts --noise
(40 %) of their votes at random (first, second or tie), the others vote as careful annotators
(tests/stats/simulated_votes.py: a tie is half a win each way on average). Designs: fixed (the
budget spread evenly over the model pairs) and adaptive (each pair drawn from stats/pairing.py's
design, refitted on the votes so far every 20 votes, as an adaptive campaign does).

Per scenario, design and fit, over --seeds seeds: coverage (the share of (seed, model) whose 95 %
interval holds the true centred strength), the mean interval width, the bias (the mean over
seeds of estimate - truth, then the mean of its size over models), the fitted spread (sd of the
estimates over the true sd) and Spearman's correlation with the truth; for the reliability fit
also how often the careless annotator's reliability is below every careful one's, and the time
of one fit with its bootstrap. Plain BT's intervals are its percentile bootstrap of aggregated
cells (stats/ranking.py, as the campaign's figures); the reliability fit's resample questions
(stats/reliability.py).

Crowd-Kit's NoisyBT (Toloka; no intervals) runs beside them on the same votes when a Python with
crowd-kit is given (--crowdkit-python /tmp/ckvenv/bin/python; it is not one of the project's
requirements): bias, spread and correlation only.

    .venv/bin/python bench/bench_bt_coverage.py [--seeds 20] [--rounds 200] [--wide 2.5]
        [--noise 0.4] [--only TEXT] [--crowdkit-python PATH]
"""

import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._django import DATA  # noqa: E402
from stats import ranking, tallies  # noqa: E402
from stats.reliability import reliability_fit, strength_intervals  # noqa: E402
from tests.stats.simulated_votes import CAREFUL, CARELESS, as_annotator_votes, simulate  # noqa: E402

LEADERBOARD = Path(os.environ.get("SHARED_DATA", DATA)) / "chinese_alpaca_eval" / "leaderboard.csv"
REFERENCE = "text-davinci-003"
KINDS = (CARELESS, CAREFUL, CAREFUL, CAREFUL, CAREFUL)

# NoisyBT's scores are sigma(s) of its strengths s (crowdkit.aggregation.NoisyBradleyTerry): read
# back as log-strengths to set them beside the others.
NOISY_BT = """
import json, math, sys
import pandas as pd
from crowdkit.aggregation import NoisyBradleyTerry
frame = pd.read_csv(sys.argv[1])
scores = NoisyBradleyTerry(n_iter=200, random_state=0).fit_predict(frame)
print(json.dumps({str(k): math.log(v / (1 - v)) for k, v in scores.items()}))
"""


def published_strengths() -> dict[str, float]:
    with LEADERBOARD.open(encoding="utf-8") as handle:
        rates = {row["Model Name"]: float(row["Win Rate(%)"]) / 100 for row in csv.DictReader(handle)}
    return {name: math.log(rate / (1 - rate)) for name, rate in rates.items()}


def scenarios(wide: float):
    strengths = published_strengths()
    ordered = sorted(strengths.values(), reverse=True)
    twenty = np.array([v for name, v in sorted(strengths.items(), key=lambda kv: -kv[1]) if name != REFERENCE])
    eight = np.array([ordered[k] for k in np.round(np.linspace(0, len(ordered) - 1, 8)).astype(int)])
    return [
        ("8 models, published", eight, 400),
        ("20 models, published", twenty, 1000),
        (f"8 models, x{wide:g}", wide * eight, 400),
        (f"20 models, x{wide:g}", wide * twenty, 1000),
    ]


def plain_fit(votes, n, rounds, seed):
    labels = [f"m{k}" for k in range(n)]
    counts = tallies.pair_counts_of(labels, votes["first"], votes["second"], votes["outcome"])
    started = time.process_time()
    result = ranking.bradley_terry(counts, rounds=rounds, seed=seed)
    spent = time.process_time() - started
    by = {score.label: score for score in result.scores}
    pick = [by[label] for label in labels]
    return (
        np.array([s.score for s in pick]),
        np.array([np.nan if s.lower is None else s.lower for s in pick]),
        np.array([np.nan if s.upper is None else s.upper for s in pick]),
        spent,
    )


def noisy_bt(votes, n, python):
    """NoisyBT's scores in a subprocess running `python` (crowd-kit installed there), or None."""
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as handle:
        handle.write("worker,left,right,label\n")
        for i, j, outcome, who in zip(
            votes["first"], votes["second"], votes["outcome"], votes["annotator"], strict=True
        ):
            if outcome == 2:
                continue  # NoisyBT has no ties
            winner = i if outcome == 0 else j
            handle.write(f"a{who},m{i},m{j},m{winner}\n")
        path = handle.name
    try:
        out = subprocess.run([python, "-c", NOISY_BT, path], capture_output=True, text=True, check=True)
    finally:
        os.unlink(path)
    scores = json.loads(out.stdout)
    values = np.array([scores.get(f"m{k}", np.nan) for k in range(n)])
    return values - np.nanmean(values)


def spearman(a, b) -> float:
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def summarise(truth, rows) -> dict:
    estimates = np.array([row[0] for row in rows])
    out = {
        "bias": float(np.abs(estimates.mean(axis=0) - truth).mean()),
        "spread": float(np.mean([np.std(e) / np.std(truth) for e in estimates])),
        "spearman": float(np.mean([spearman(e, truth) for e in estimates])),
    }
    if rows[0][1] is not None:
        lower = np.array([row[1] for row in rows])
        upper = np.array([row[2] for row in rows])
        out["coverage"] = float(np.mean((lower <= truth) & (truth <= upper)))
        out["width"] = float(np.nanmean(upper - lower))
    if len(rows[0]) > 3:
        out["cpu"] = float(np.mean([row[3] for row in rows]))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--wide", type=float, default=2.5)
    parser.add_argument("--noise", type=float, default=0.4)
    parser.add_argument("--only", default="")
    parser.add_argument("--crowdkit-python", default="", help="a Python with crowd-kit installed, for NoisyBT")
    args = parser.parse_args()
    if args.crowdkit_python:
        try:
            subprocess.run(
                [args.crowdkit_python, "-c", "from crowdkit.aggregation import NoisyBradleyTerry"],
                check=True,
                capture_output=True,
            )
        except (OSError, subprocess.CalledProcessError):
            print(f"NoisyBT skipped: crowd-kit is not importable by {args.crowdkit_python}")
            args.crowdkit_python = ""
    else:
        print("NoisyBT skipped: no --crowdkit-python (crowd-kit is outside the project's requirements)")
    print(f"{args.seeds} seeds, {args.rounds} bootstrap rounds, careless annotator: {args.noise:.0%} random votes\n")
    header = f"{'scenario':<22} {'design':<9} {'fit':<12} {'coverage':>8} {'width':>6} {'bias':>6} {'spread':>6} {'rho':>6} {'CPU s':>6}"
    print(header)
    for name, theta, budget in scenarios(args.wide):
        if args.only and args.only not in name:
            continue
        n = len(theta)
        truth = theta - theta.mean()
        for design in ("fixed", "adaptive"):
            plain, aware, noisy = [], [], []
            below = 0
            for seed in range(args.seeds):
                votes = simulate(theta, budget, kinds=KINDS, design=design, seed=seed, noise=args.noise)
                plain.append(plain_fit(votes, n, args.rounds, seed))
                started = time.process_time()
                fit = reliability_fit(as_annotator_votes(votes, n, len(KINDS)), rounds=args.rounds, seed=seed)
                spent = time.process_time() - started
                lower, upper = strength_intervals(fit)
                aware.append((fit.scores, lower, upper, spent))
                below += bool(fit.reliability[0] < fit.reliability[1:].min())
                if args.crowdkit_python:
                    noisy.append((noisy_bt(votes, n, args.crowdkit_python), None, None))
            for fit_name, rows in (("plain BT", plain), ("reliability", aware), ("NoisyBT", noisy)):
                if not rows:
                    continue
                s = summarise(truth, rows)
                cover = f"{s['coverage']:.1%}" if "coverage" in s else "-"
                width = f"{s['width']:.2f}" if "width" in s else "-"
                cpu = f"{s['cpu']:.2f}" if "cpu" in s else "-"
                print(
                    f"{name:<22} {design:<9} {fit_name:<12} {cover:>8} {width:>6} {s['bias']:>6.3f} "
                    f"{s['spread']:>6.2f} {s['spearman']:>6.3f} {cpu:>6}"
                )
            print(f"{'':<22} {design:<9} careless annotator below every careful one in {below}/{args.seeds} seeds")


if __name__ == "__main__":
    main()
