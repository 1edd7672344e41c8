"""Fixed against adaptive pairing, side by side, on what decides a ranking: the 95 % interval of the
gap between neighbours in the true ranking, with each model's interval, bias and rank correlation
beside it.

The truth: model strengths from ChineseAlpacaEval's published leaderboard
(../shared/data/chinese_alpaca_eval/leaderboard.csv, read in place): each model's win rate against
the reference text-davinci-003 as log-odds, its Bradley-Terry strength relative to the reference.
20 models: all but the reference (sd 1.16); 8 models: the 21 at evenly spaced ranks (sd 1.47).
--wide F adds the same at F times the spread.

The annotators: five, taking turns. A vote is "cannot determine" with probability 0.125 (URS: 50 of
400); otherwise a tie with probability 4 * TIE * p * (1 - p) (a quarter of the votes at the
published spread), else a win for A with probability p - tie / 2, p = sigma(strength A - strength B):
a tie is half a win each way on average, the model the campaign's fit assumes. One annotator in
five is careless: --careless (40 %) of their votes are left, right or tie at random, which breaks
that model (every fitted difference is pulled toward zero). Each scenario also runs without them.

The campaigns: the budget is 400 votes for 8 models, 1,000 for 20, one vote per pair, 200 questions
per model pair. Fixed: every pair drawn at creation, balanced over the model pairs (as
`campaign_create` draws them), asked in a random order. Adaptive: uniform share 0.2; the design is
the one `annotation/design.py` computes (`stats.pairing.pairing_design` on the counted votes, the
remaining budget scaled by the share of decisive votes, the pairs with questions left), refreshed
every --refresh votes as the background worker does, and each pair drawn as `pair_draw` draws it
(`draw_pair` with random.Random(f"{seed}:{number}")). "previous": the same with the criterion's
gaps left out (gap weight 0: the per-model intervals alone, the design before this one). "oracle":
pairs drawn from the best allocation for the gaps at the TRUE strengths (no uniform share): what no
campaign can know, the ceiling the designs are measured against. The votes are simulated with the
campaign's maths directly rather than through its request path (which costs a fixed number of
queries and is measured on its own below): 20 seeds of every design then take minutes, not hours.

The measures, at 30 %, 40 %, ..., 100 % of the budget:
- "bought": the precision each design bought, from the Fisher information at the TRUE strengths of
  the pairs it asked (the decisive votes, ties included: sum of p (1 - p) d d'): the mean 95 %
  interval width 2 * 1.96 * sd of the gaps between neighbours in the true ranking, and of the
  centred log-strengths. Neither rewards an estimate for being biased.
- "bootstrap": the campaign's own figures (stats.ranking as bt_report fits them, --rounds
  bootstrap rounds, from half the budget on): the same two widths as percentile intervals of the
  rounds.
"Votes to reach" is where a design's mean curve over the seeds comes down to the fixed design's
final value (log-log interpolation; past the budget, extrapolated by ~ 1/sqrt(votes)); its seed
interval resamples the seeds of both designs 1,000 times. At the end: bias (the mean over seeds of
estimate - truth, both centred, then the mean of its size over models), Spearman and Kendall against
the truth, coverage of the per-model intervals, each with the seed interval of its difference from
the fixed design. Before the scenarios: the ceiling (what the best design at the true strengths
saves on either measure, Fisher information, no simulation) and the request path's CPU and queries.

    .venv/bin/python bench/bench_adaptive_pairing.py [--seeds 20] [--refresh 20] [--careless 0.4]
        [--rounds 100] [--jobs 2] [--wide F] [--quick]
"""

import argparse
import csv
import functools
import math
import random
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from scipy.stats import kendalltau, spearmanr  # noqa: E402

from bench._django import DATA, setup_django  # noqa: E402
from stats import ranking, tallies  # noqa: E402
from stats.intervals import percentile_interval  # noqa: E402
from stats.pairing import (  # noqa: E402
    Z95,
    _laplacian,
    all_pairs,
    draw_pair,
    known_order_neighbours,
    pairing_design,
    ranking_contrasts,
)

LEADERBOARD = DATA / "chinese_alpaca_eval" / "leaderboard.csv"
REFERENCE = "text-davinci-003"
TIE = 0.35
CANNOT_DETERMINE = 0.125
CARELESS = 0.4
ANNOTATORS = 5
UNIFORM_SHARE = 0.2
QUESTIONS = 200
CHECKPOINTS = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
# The bootstrap (the slow part) is read from half the budget on: where the curves cross.
BOOTSTRAP_FROM = 0.5
DESIGNS = ("fixed", "adaptive", "previous", "oracle")


def published_strengths() -> dict[str, float]:
    """Model -> log-odds of its published win rate against the reference."""
    with LEADERBOARD.open(encoding="utf-8") as handle:
        rates = {row["Model Name"]: float(row["Win Rate(%)"]) / 100 for row in csv.DictReader(handle)}
    return {name: math.log(rate / (1 - rate)) for name, rate in rates.items()}


def scenarios(wide: float) -> list[tuple[str, np.ndarray, int]]:
    strengths = published_strengths()
    ordered = sorted(strengths.values(), reverse=True)
    twenty = np.array([value for name, value in sorted(strengths.items(), key=lambda kv: -kv[1]) if name != REFERENCE])
    eight = np.array([ordered[k] for k in np.round(np.linspace(0, len(ordered) - 1, 8)).astype(int)])
    out = [("8 models, published spread", eight, 400), ("20 models, published spread", twenty, 1000)]
    if wide:
        out += [
            (f"8 models, x{wide:g} spread", wide * eight, 400),
            (f"20 models, x{wide:g} spread", wide * twenty, 1000),
        ]
    return out


# ----------------------------------------------------------------------------- precision at the truth


def true_order(theta: np.ndarray) -> np.ndarray:
    return np.argsort(-theta, kind="stable")


def bought(theta: np.ndarray, trials: np.ndarray) -> tuple[float, float]:
    """(mean 95 % width of the gaps between true neighbours, mean 95 % width of the centred
    log-strengths) from the Fisher information at the true strengths of `trials` votes per pair;
    NaN while the pairs asked do not connect every model."""
    n = len(theta)
    pairs = all_pairs(n)
    p = 1 / (1 + np.exp(-(theta[pairs[:, 0]] - theta[pairs[:, 1]])))
    information = _laplacian(n, pairs[:, 0], pairs[:, 1], trials * p * (1 - p))
    # The information is singular along "add one to every strength"; with that direction fixed by
    # the mean, its inverse on the centred strengths is inv(I + 11'/n) - 11'/n (connected graphs).
    if np.linalg.matrix_rank(information) < n - 1:
        return math.nan, math.nan
    covariance = np.linalg.inv(information + 1.0 / n) - 1.0 / n
    order = true_order(theta)
    above, below = order[:-1], order[1:]
    gaps = np.sqrt(covariance[above, above] + covariance[below, below] - 2 * covariance[above, below])
    return 2 * Z95 * float(gaps.mean()), 2 * Z95 * float(np.sqrt(np.diag(covariance)).mean())


def best_allocation(theta: np.ndarray, gap_weight: float, iterations: int = 3000) -> np.ndarray:
    """The allocation over all_pairs(n) that minimises gap_weight * mean sd of the gaps between true
    neighbours + (1 - gap_weight) * mean sd of the centred strengths at the true strengths (the
    multiplicative algorithm, as stats/pairing.py; sds, not variances: the widths themselves)."""
    n = len(theta)
    pairs = all_pairs(n)
    p = 1 / (1 + np.exp(-(theta[pairs[:, 0]] - theta[pairs[:, 1]])))
    weights = p * (1 - p)
    rows, omega = ranking_contrasts(known_order_neighbours(true_order(theta)), gap_weight)
    allocation = np.full(len(pairs), 1 / len(pairs))
    i, j = pairs[:, 0], pairs[:, 1]
    for _ in range(iterations):
        covariance = np.linalg.inv(_laplacian(n, i, j, allocation * weights) + 1.0 / n) - 1.0 / n
        spread = rows @ covariance
        sds = np.sqrt(np.maximum(np.einsum("ij,ij->i", spread, rows), 1e-300))
        gram = spread.T @ (spread * (omega / (2 * sds))[:, None])
        gain = weights * np.maximum(gram[i, i] + gram[j, j] - 2 * gram[i, j], 0)
        allocation = allocation * np.sqrt(gain / (allocation @ gain))
        allocation /= allocation.sum()
    return allocation


def ceiling(theta: np.ndarray) -> tuple[float, float]:
    """Share of the votes the best design at the true strengths saves against uniform pairs for the
    same mean gap width, and for the same mean per-model width (each optimised for its own)."""
    out = []
    uniform = np.full(len(all_pairs(len(theta))), 1.0)
    for gap_weight, measure in ((1.0, 0), (0.0, 1)):
        best = best_allocation(theta, gap_weight) * len(uniform)
        out.append(1 - (bought(theta, best)[measure] / bought(theta, uniform)[measure]) ** 2)
    return out[0], out[1]


# ----------------------------------------------------------------------------- the campaigns


def vote(rng, theta, left: int, right: int, careless: bool, noise: float) -> int | None:
    """0: left wins, 1: right wins, 2: tie, None: cannot determine."""
    if rng.random() < CANNOT_DETERMINE:
        return None
    if careless and rng.random() < noise:
        return int(rng.integers(3))
    p = 1 / (1 + math.exp(-(theta[left] - theta[right])))
    tie = 4 * TIE * p * (1 - p)
    draw = rng.random()
    return 2 if draw < tie else 0 if draw < tie + p - tie / 2 else 1


def fixed_sequence(pairs: int, budget: int, rng) -> np.ndarray:
    """Every model pair budget // pairs times, the rest on distinct pairs, in a random order."""
    base = np.repeat(np.arange(pairs), budget // pairs)
    extra = rng.choice(pairs, budget - len(base), replace=False)
    return rng.permutation(np.concatenate([base, extra]))


def bootstrap_widths(theta: np.ndarray, counts: np.ndarray, rounds: int, seed: int):
    """The campaign's fit (bt_report's: stats.ranking, unregularised where it can be) with its
    bootstrap rounds: (estimate, lower, upper, mean gap width, mean per-model width), widths over the
    true neighbours; None while some model is not connected to the others."""
    n = len(theta)
    pairs = all_pairs(n)
    labels = [f"m{k:02d}" for k in range(n)]
    asked = counts.sum(axis=1) > 0
    whole = counts.astype(np.int64)
    table = tallies.PairCounts(
        labels, pairs[asked, 0], pairs[asked, 1], whole[asked, 0], whole[asked, 1], whole[asked, 2]
    )
    if len(ranking.components(n, table.first, table.second)) > 1:
        return None
    matrix = tallies.win_matrix(n, table.first, table.second, table.first_wins, table.second_wins, table.ties)
    alpha = 0.0 if ranking.infinite_scores_reason(matrix, labels) is None else ranking.DEFAULT_ALPHA
    estimate = ranking.estimate(matrix, alpha=alpha, labels=labels)
    draws = ranking.bootstrap(table, list(range(n)), estimate, rounds=rounds, alpha=alpha, seed=seed)
    draws = draws[~np.isnan(draws).any(axis=1)]
    lower, upper = percentile_interval(draws)
    order = true_order(theta)
    gap_lower, gap_upper = percentile_interval(draws[:, order[:-1]] - draws[:, order[1:]])
    return estimate, lower, upper, float(np.mean(gap_upper - gap_lower)), float(np.mean(upper - lower))


def run_campaign(*, design: str, theta, budget: int, seed: int, refresh: int, noise: float, rounds: int, oracle):
    """One campaign to its budget; its measures at the checkpoints and its final fit."""
    n = len(theta)
    pairs = all_pairs(n)
    counts = np.zeros((len(pairs), 3))
    used = np.zeros(len(pairs), dtype=np.int64)
    rng = np.random.default_rng(seed)
    marks = {int(round(fraction * budget)): fraction for fraction in CHECKPOINTS}
    sequence = fixed_sequence(len(pairs), budget, np.random.default_rng(10_000 + seed))
    stored = None
    cast = decisive = 0
    out: dict = {"bought": {}, "bootstrap": {}}
    for number in range(1, budget + 1):
        if design == "fixed":
            pair = int(sequence[number - 1])
        elif design == "oracle":
            pair = int(np.random.default_rng([seed, number]).choice(len(pairs), p=oracle))
        else:
            if stored is None or (number - 1) % refresh == 0:
                asked = counts.sum(axis=1) > 0
                stored = pairing_design(
                    n,
                    pairs[asked, 0],
                    pairs[asked, 1],
                    counts[asked, 0],
                    counts[asked, 1],
                    counts[asked, 2],
                    remaining=(budget - cast) * (decisive / cast if cast else 1.0),
                    uniform_share=UNIFORM_SHARE,
                    available=used < QUESTIONS,
                    gap_weight=0.0 if design == "previous" else 0.5,
                )
            draw = random.Random(f"{seed}:{number}")
            pair = draw_pair(
                stored.uniform,
                stored.information,
                UNIFORM_SHARE,
                branch_random=draw.random(),
                pick_random=draw.random(),
                excluded=np.flatnonzero(used >= QUESTIONS),
            ).pair
        used[pair] += 1
        cast += 1
        left, right = pairs[pair]
        outcome = vote(rng, theta, left, right, careless=number % ANNOTATORS == 0, noise=noise)
        if outcome is not None:
            counts[pair, outcome] += 1
            decisive += 1
        if number in marks:
            fraction = marks[number]
            out["bought"][fraction] = bought(theta, counts.sum(axis=1))
            fitted = bootstrap_widths(theta, counts, rounds, seed) if fraction >= BOOTSTRAP_FROM else None
            out["bootstrap"][fraction] = (math.nan, math.nan) if fitted is None else fitted[3:]
            out["final"] = fitted
    return out


# ----------------------------------------------------------------------------- reading the runs


def votes_to_reach(target: float, budget: int, curve: dict) -> tuple[float, str]:
    """Votes at which a curve first comes down to `target` (log-log between checkpoints), and how:
    "" between two checkpoints, "+" past the budget (extrapolated by ~ 1/sqrt(votes)), "<=" already
    below at the first checkpoint (then the first checkpoint's votes, an upper bound)."""
    points = sorted((fraction * budget, width) for fraction, width in curve.items() if np.isfinite(width))
    if points[0][1] <= target:
        return points[0][0], "<="
    for (v0, w0), (v1, w1) in zip(points, points[1:], strict=False):
        if w0 > target >= w1:
            slope = (math.log(v1) - math.log(v0)) / (math.log(w1) - math.log(w0))
            return math.exp(math.log(v0) + (math.log(target) - math.log(w0)) * slope), ""
    last_votes, last_width = points[-1]
    return last_votes * (last_width / target) ** 2, "+"


def curve(runs: list[dict], kind: str, measure: int) -> dict:
    """The mean over the runs at each checkpoint (NaN where a measure was not read)."""
    out = {}
    for f in CHECKPOINTS:
        values = [run[kind][f][measure] for run in runs if np.isfinite(run[kind][f][measure])]
        out[f] = float(np.mean(values)) if values else math.nan
    return out


def saving(fixed: list[dict], other: list[dict], budget: int, kind: str, resamples: int = 1000):
    """(share of the votes saved to reach the fixed design's final mean gap width, how, seed interval)."""
    votes, how = votes_to_reach(curve(fixed, kind, 0)[1.0], budget, curve(other, kind, 0))
    rng = np.random.default_rng(0)
    again = []
    for _ in range(resamples):
        some_fixed = [fixed[k] for k in rng.integers(0, len(fixed), len(fixed))]
        some_other = [other[k] for k in rng.integers(0, len(other), len(other))]
        again.append(votes_to_reach(curve(some_fixed, kind, 0)[1.0], budget, curve(some_other, kind, 0))[0])
    low, high = np.percentile(again, [2.5, 97.5])
    return 1 - votes / budget, how, 1 - high / budget, 1 - low / budget


def per_seed_finals(theta: np.ndarray, runs: list[dict]) -> dict[str, np.ndarray]:
    truth = theta - theta.mean()
    runs = [run for run in runs if run["final"] is not None]
    estimates = np.array([run["final"][0] - run["final"][0].mean() for run in runs])
    return {
        "estimates": estimates,
        "spearman": np.array([spearmanr(e, truth)[0] for e in estimates]),
        "kendall": np.array([kendalltau(e, truth)[0] for e in estimates]),
        "coverage": np.array([np.mean((run["final"][1] <= truth) & (truth <= run["final"][2])) for run in runs]),
        "bought_width": np.array([run["bought"][1.0][1] for run in runs]),
        "bootstrap_width": np.array([run["bootstrap"][1.0][1] for run in runs]),
    }


def bias(theta: np.ndarray, estimates: np.ndarray) -> float:
    return float(np.abs(estimates.mean(axis=0) - (theta - theta.mean())).mean())


def difference_interval(theta, fixed: dict, other: dict, key: str, resamples: int = 1000) -> tuple[float, float, float]:
    """other - fixed on a final figure (bias over the seeds, or the mean of a per-seed one), with
    the percentile interval over resamples of the seeds of each."""

    def value(finals, picks):
        if key == "bias":
            return bias(theta, finals["estimates"][picks])
        return float(np.mean(finals[key][picks]))

    rng = np.random.default_rng(1)
    mine, theirs = len(other["estimates"]), len(fixed["estimates"])
    whole = value(other, np.arange(mine)) - value(fixed, np.arange(theirs))
    again = [
        value(other, rng.integers(0, mine, mine)) - value(fixed, rng.integers(0, theirs, theirs))
        for _ in range(resamples)
    ]
    low, high = np.percentile(again, [2.5, 97.5])
    return whole, float(low), float(high)


# ----------------------------------------------------------------------------- the request path


def draw_cost(sizes=(200, 2000), votes=200) -> None:
    """CPU per next-pair + vote and SQL queries of a next-pair, fixed against adaptive campaigns of 8
    models on datasets of 200 and 2,000 questions (through assignment_next and vote_cast)."""
    # Django is set up here only: the simulations need none of it (a throwaway database, migrated).
    setup_django()
    from django.contrib.auth import get_user_model
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    from annotation.campaigns import campaign_create
    from annotation.models import Campaign
    from annotation.services import assignment_next, vote_cast
    from core.models import Membership, default_workspace_id
    from curation.models import Dataset, Item
    from judging.models import Answer, CandidateModel

    people = [get_user_model().objects.create(username=f"bench-annotator-{k}") for k in range(ANNOTATORS)]
    Membership.objects.bulk_create(
        Membership(workspace_id=default_workspace_id(), user=person, annotator=True) for person in people
    )
    print(f"\nThe request path, {votes} votes by 5 annotators on 8 models (services; the design is not refreshed):")
    for questions in sizes:
        dataset = Dataset.objects.create(name=f"cost-{questions}")
        items = Item.objects.bulk_create(
            Item(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?") for n in range(questions)
        )
        models = CandidateModel.objects.bulk_create(CandidateModel(name=f"cost-{questions}-{k}") for k in range(8))
        Answer.objects.bulk_create(
            Answer(item=item, model=model, text="An answer.") for item in items for model in models
        )
        cells = []
        for design in ("fixed", "adaptive"):
            options = (
                {"sampling": Campaign.Sampling.ADAPTIVE, "budget": votes}
                if design == "adaptive"
                else {"question_count": votes}
            )
            campaign = campaign_create(
                slug=f"cost-{design}-{questions}",
                title=f"cost-{design}-{questions}",
                dataset=dataset,
                candidates=models,
                annotators=people,
                **options,
            )
            spent, queries = 0.0, []
            for number in range(votes):
                person = people[number % ANNOTATORS]
                reset_queries()  # DEBUG keeps the last 9,000 queries only
                started = time.process_time()
                with CaptureQueriesContext(connection) as captured:
                    assignment = assignment_next(campaign=campaign, annotator=person)
                queries.append(len(captured))
                assert assignment is not None
                vote_cast(campaign=campaign, annotator=person, token=assignment.token, choice="tie")
                spent += time.process_time() - started
            cells.append(f"{design} {1000 * spent / votes:.1f} ms ({min(queries)}-{max(queries)} queries)")
        print(f"  {questions:>5} questions: " + ", ".join(cells))


# ----------------------------------------------------------------------------- the report


def percent(low: float, high: float) -> str:
    return f"seed interval {100 * low:+.1f}% to {100 * high:+.1f}%"


def report(name: str, theta: np.ndarray, budget: int, runs: dict, seeds: int, seconds: float, noise: float) -> None:
    who = f"one careless annotator in five ({100 * noise:.0f} % at random)" if noise else "no careless annotator"
    print(f"\n{name}, {who}: sd {theta.std(ddof=1):.2f}, budget {budget} votes, {seeds} seeds ({seconds:.0f} s)")
    designs = [design for design in DESIGNS if design in runs]
    for kind, title in (
        ("bought", "precision bought (Fisher information at the true strengths of the pairs asked)"),
        ("bootstrap", "bootstrap (the campaign's BT fit and its percentile intervals)"),
    ):
        print(f"  {title}")
        print(
            "    mean 95 % interval of the gaps between true neighbours at "
            + ", ".join(f"{int(100 * f)}%" for f in CHECKPOINTS)
            + " of the budget"
        )
        for design in designs:
            values = curve(runs[design], kind, 0)
            print(
                f"    {design:>9}: "
                + " ".join(f"{values[f]:5.3f}" if np.isfinite(values[f]) else "    -" for f in CHECKPOINTS)
            )
        final = curve(runs["fixed"], kind, 0)[1.0]
        for design in designs[1:]:
            share, how, low, high = saving(runs["fixed"], runs[design], budget, kind)
            print(
                f"    to the fixed design's final {final:.3f}: {design} {how}{budget * (1 - share):.0f} votes, "
                f"{100 * share:+.1f}% ({percent(low, high)})"
            )
        widths = {design: curve(runs[design], kind, 1)[1.0] for design in designs}
        print(
            "    mean per-model 95 % interval width at the end: "
            + ", ".join(f"{design} {widths[design]:.3f}" for design in designs)
        )
    finals = {design: per_seed_finals(theta, runs[design]) for design in designs}
    for design in designs:
        row = finals[design]
        print(
            f"    {design:>9}: bias {bias(theta, row['estimates']):.3f}, Spearman {row['spearman'].mean():.3f}, "
            f"Kendall {row['kendall'].mean():.3f}, intervals cover the truth {100 * row['coverage'].mean():.0f}%"
        )
    print("  the guards, adaptive - fixed (seed interval):")
    for key, label in (
        ("bought_width", "per-model width bought"),
        ("bootstrap_width", "per-model width, bootstrap"),
        ("bias", "bias"),
        ("spearman", "Spearman"),
        ("kendall", "Kendall"),
    ):
        whole, low, high = difference_interval(theta, finals["fixed"], finals["adaptive"], key)
        print(f"    {label:>26}: {whole:+.3f} ({low:+.3f} to {high:+.3f})")


def run_one(job: tuple[str, int], **options) -> dict:
    """run_campaign for one (design, seed): what the worker processes run."""
    design, seed = job
    return run_campaign(design=design, seed=seed, **options)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--refresh", type=int, default=20, help="Votes between two refreshes of the design.")
    parser.add_argument("--careless", type=float, default=CARELESS, help="The careless annotator's random share.")
    parser.add_argument("--rounds", type=int, default=100, help="Bootstrap rounds of each fit.")
    parser.add_argument("--jobs", type=int, default=2, help="Processes running the campaigns side by side.")
    parser.add_argument("--wide", type=float, default=0, help="Also run the strengths times this spread.")
    parser.add_argument("--quick", action="store_true", help="3 seeds, 8 models, 50 rounds: a smoke run.")
    args = parser.parse_args()
    if not LEADERBOARD.exists():
        print(f"Needs {LEADERBOARD} (the shared public data): not found.")
        return
    started = time.perf_counter()
    seeds, rounds = (3, 50) if args.quick else (args.seeds, args.rounds)
    print("The ceiling: votes the best design at the true strengths saves against uniform pairs (Fisher)")
    for name, theta, _budget in scenarios(args.wide)[: 1 if args.quick else 2]:
        for scale in (1, 1.5, 2.5):
            gaps, models = ceiling(scale * theta)
            print(
                f"  {name.split(',')[0]:>9} x{scale:g}: gaps between neighbours {100 * gaps:4.1f}%, per-model {100 * models:4.1f}%"
            )
    for name, theta, budget in scenarios(args.wide)[: 1 if args.quick else None]:
        oracle = best_allocation(theta, 1.0)
        for noise in (args.careless, 0.0)[: 1 if args.quick else 2]:
            began = time.perf_counter()
            designs = DESIGNS if noise else ("fixed", "adaptive", "oracle")
            one = functools.partial(
                run_one, theta=theta, budget=budget, refresh=args.refresh, noise=noise, rounds=rounds, oracle=oracle
            )
            jobs = [(design, seed) for design in designs for seed in range(seeds)]
            with ProcessPoolExecutor(max_workers=args.jobs) as pool:
                done = list(pool.map(one, jobs))
            runs = {
                design: [run for (which, _seed), run in zip(jobs, done, strict=True) if which == design]
                for design in designs
            }
            report(name, theta, budget, runs, seeds, time.perf_counter() - began, noise)
    draw_cost(sizes=(200,) if args.quick else (200, 2000), votes=60 if args.quick else 200)
    used = sum(
        usage.ru_utime + usage.ru_stime
        for usage in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )
    print(f"\nIn all: {time.perf_counter() - started:.0f} s, {used:.0f} s of CPU over {args.jobs} processes")


if __name__ == "__main__":
    main()
