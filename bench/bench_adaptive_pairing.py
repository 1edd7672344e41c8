"""Fixed against adaptive pairing, side by side: simulated annotators with known model strengths vote
through the assignment path, and the campaign's own Bradley-Terry report (bt_report, as its
results page computes it) is read along the way.

The path: by default the functions the annotation API's endpoints call, with the same arguments
(GET /api/annotate/<slug>/next/ is assignment_next + assignment_display, POST .../votes/ is
vote_cast); --via api sends the same through the HTTP endpoints with the Django test client
(the same figures at about three times the time).

The truth: model strengths from ChineseAlpacaEval's published leaderboard
(../shared/data/chinese_alpaca_eval/leaderboard.csv, read in place): each model's win rate against
the reference text-davinci-003 as log-odds, which is its Bradley-Terry strength relative to the
reference. 20 models: all but the reference (sd 1.16); 8 models: the 21 at evenly spaced ranks
(sd 1.47). "realistic" uses them as published; "wide" multiplies them by --wide (2.5 by default:
sd 2.9-3.7, a campaign that puts frontier models beside small old ones).

The annotators: five (as in URS's human annotation), taking turns; they read which candidate wrote
each answer from the answer's text (the simulation's stand-in for judging its quality), never from
anything the API adds. A vote is "cannot determine" with probability 0.125 (URS: 50 of 400);
otherwise a tie with probability 4 * TIE * p * (1 - p) (ties likeliest between equal models: a
quarter of the votes at the realistic spread), else a win for A with probability p - tie / 2,
p = sigma(strength A - strength B). So a tie is half a win each way on average, the model the
campaign's fit assumes, and its estimates are consistent for the truth under any design. One
annotator is noisy: --noise (40 %) of their votes are left, right or tie at random; this breaks
that model (the estimates are pulled together, most for pairs far apart). No gold pairs (the
noisy annotator would mostly pass them: 0.6 + 0.4 / 3 = 73 % accuracy).

Both designs get the same budget (400 votes for 8 models, 1,000 for 20), one vote per pair, on
200 questions. Fixed: `campaign_create` draws every pair at creation, balanced over the model
pairs. Adaptive: `--sampling adaptive`, uniform share 0.2; the design is refreshed every --refresh
votes by running the queued figures task, as the background worker does (five annotators at a
vote a minute each wait about four minutes between refreshes at 20: conservative).

Per design and seed the campaign's BT figures (200 bootstrap rounds) are read at 30 %, 40 %, ...,
100 % of the budget; the mean 95 % interval width (log-strength units) and the RMSE against the
truth are averaged over seeds. "Votes to reach" is where the adaptive curve crosses the fixed
design's final value (log-log interpolation; past the budget, extrapolated by ~ 1/sqrt(votes)).
At the end: bias (the mean over seeds of estimate - truth, both centred, then the mean of its
size over models), RMSE, Spearman and Kendall against the truth, and how often a model's interval
covers the truth. Before the scenarios: what the best design for the true strengths could save
at all, by spread (Fisher information, no simulation: the ceiling for any adaptive design), and
the request path's CPU and SQL queries for fixed and adaptive campaigns of 200 and 2,000 questions.

    .venv/bin/python bench/bench_adaptive_pairing.py [--seeds 20] [--refresh 20] [--wide 2.5]
        [--noise 0.4] [--via services|api] [--only TEXT] [--quick]
"""

import argparse
import csv
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# The bench's own annotators send a vote every few milliseconds: above any sane per-account limit.
os.environ.setdefault("API_THROTTLE_USER", "1000000/min")
os.environ.setdefault("CACHE_BACKEND", "django.core.cache.backends.locmem.LocMemCache")
from bench._django import DATA, setup_django  # noqa: E402

setup_django()

from django.test import Client  # noqa: E402
from django.urls import reverse  # noqa: E402
from scipy.stats import kendalltau, spearmanr  # noqa: E402

from annotation.campaigns import campaign_create  # noqa: E402
from annotation.models import Campaign  # noqa: E402
from annotation.report import bt_report  # noqa: E402
from annotation.selectors import assignment_display  # noqa: E402
from annotation.services import assignment_next, vote_cast  # noqa: E402
from core.models import Membership, default_workspace_id  # noqa: E402
from curation.models import Dataset, Item  # noqa: E402
from judging.models import Answer, CandidateModel  # noqa: E402
from stats.pairing import _laplacian, all_pairs, centred_sds  # noqa: E402
from tests.figures import run_queued_figures  # noqa: E402

LEADERBOARD = DATA / "chinese_alpaca_eval" / "leaderboard.csv"
REFERENCE = "text-davinci-003"
TIE = 0.35
CANNOT_DETERMINE = 0.125
NOISE = 0.4
ANNOTATORS = 5
ROUNDS = 200
# Questions of the dataset: the fixed design draws every one, budget / QUESTIONS pairs each (2 for
# 8 models, 5 for 20); the adaptive one draws from them (never short: 200 per model pair).
QUESTIONS = 200
CHECKPOINTS = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]


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
    return [
        ("8 models, realistic", eight, 400),
        ("20 models, realistic", twenty, 1000),
        (f"8 models, wide (x{wide:g})", wide * eight, 400),
        (f"20 models, wide (x{wide:g})", wide * twenty, 1000),
    ]


# ----------------------------------------------------------------------------- the ceiling


def ceiling_saving(theta: np.ndarray, iterations: int = 2000) -> float:
    """1 - votes(best allocation) / votes(uniform) for the same mean sd, from the Fisher information
    at the true strengths: no design can save more (in the large-sample limit)."""
    n = len(theta)
    pairs = all_pairs(n)
    p = 1 / (1 + np.exp(-(theta[pairs[:, 0]] - theta[pairs[:, 1]])))
    weights = p * (1 - p)
    tiny = np.eye(n) * 1e-9

    def mean_sd(allocation):
        return centred_sds(_laplacian(n, pairs[:, 0], pairs[:, 1], allocation * weights) + tiny).mean()

    allocation = np.full(len(pairs), 1 / len(pairs))
    centre = np.eye(n) - 1 / n
    for _ in range(iterations):
        precision = _laplacian(n, pairs[:, 0], pairs[:, 1], allocation * weights) + tiny
        spread = centre @ np.linalg.inv(precision)
        sds = np.sqrt(np.einsum("ij,ji->i", spread, centre))
        gram = spread.T @ (spread / sds[:, None])
        gain = weights * (
            gram[pairs[:, 0], pairs[:, 0]] + gram[pairs[:, 1], pairs[:, 1]] - 2 * gram[pairs[:, 0], pairs[:, 1]]
        )
        allocation = allocation * np.sqrt(gain / (allocation @ gain))
        allocation /= allocation.sum()
    uniform = np.full(len(pairs), 1 / len(pairs))
    return 1 - (mean_sd(allocation) / mean_sd(uniform)) ** 2


# ----------------------------------------------------------------------------- the cost of a draw


def draw_cost(people, sizes=(200, 2000), votes=200) -> None:
    """CPU per next-pair + vote and SQL queries of a next-pair that draws a new pair, for fixed and
    adaptive campaigns of 8 models on datasets of 200 and 2,000 questions, side by side."""
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    print(f"\nThe request path, {votes} votes by 5 annotators on 8 models (services; the design is not refreshed):")
    for questions in sizes:
        dataset, models = world(8, questions, people, name=f"cost-{questions}")
        cells = []
        for design in ("fixed", "adaptive"):
            options = (
                {"sampling": Campaign.Sampling.ADAPTIVE, "budget": votes}
                if design == "adaptive"
                else {"question_count": votes}
            )
            campaign = campaign_create(
                slug=f"cost-{design}-{questions}",
                title="cost",
                dataset=dataset,
                candidates=models,
                annotators=people,
                **options,
            )
            spent, queries = 0.0, []
            for vote in range(votes):
                person = people[vote % ANNOTATORS]
                # DEBUG keeps the last 9,000 queries only: start each count from an empty log.
                reset_queries()
                started = time.process_time()
                with CaptureQueriesContext(connection) as captured:
                    assignment = assignment_next(campaign=campaign, annotator=person)
                queries.append(len(captured))
                assert assignment is not None
                vote_cast(campaign=campaign, annotator=person, token=assignment.token, choice="tie")
                spent += time.process_time() - started
            cells.append(f"{design} {1000 * spent / votes:.1f} ms ({min(queries)}-{max(queries)} queries)")
        print(f"  {questions:>5} questions: " + ", ".join(cells))


# ----------------------------------------------------------------------------- the world


def world(size: int, questions: int, people, name: str = ""):
    """A dataset of `questions` questions answered by `size` candidates; each answer says who wrote it."""
    name = name or f"bench-adaptive-{size}"
    dataset = Dataset.objects.create(name=name)
    items = Item.objects.bulk_create(
        Item(dataset=dataset, external_id=f"q{n}", question=f"Question {n}?") for n in range(questions)
    )
    models = CandidateModel.objects.bulk_create(CandidateModel(name=f"{name}-{k:02d}") for k in range(size))
    Answer.objects.bulk_create(
        Answer(item=item, model=model, text=f"Answer by candidate {k} to question {n}.")
        for n, item in enumerate(items)
        for k, model in enumerate(models)
    )
    return dataset, models


def annotators():
    from django.contrib.auth import get_user_model

    User = get_user_model()
    people = [User.objects.create(username=f"bench-annotator-{k}") for k in range(ANNOTATORS)]
    Membership.objects.bulk_create(
        Membership(workspace_id=default_workspace_id(), user=person, annotator=True) for person in people
    )
    return people


class ApiAnnotator:
    """An annotator on the API: GET .../next/ and POST .../votes/ through the Django test client."""

    def __init__(self, person):
        self.client = Client(HTTP_HOST="localhost")
        self.client.force_login(person)

    def next_pair(self, campaign) -> dict:
        response = self.client.get(reverse("api-annotate-next", args=[campaign.slug]))
        assert response.status_code == 200, response.status_code
        return response.json()["pair"]

    def vote(self, campaign, token: str, picked: str) -> None:
        response = self.client.post(
            reverse("api-annotate-vote", args=[campaign.slug]),
            {"token": token, "choice": picked},
            content_type="application/json",
        )
        assert response.status_code == 201, response.content


class ServiceAnnotator:
    """The same through the functions those two endpoints call, with the same arguments: what the
    annotator is shown (assignment_display) and the vote (vote_cast), without the HTTP layer."""

    def __init__(self, person):
        self.person = person

    def next_pair(self, campaign) -> dict:
        assignment = assignment_next(campaign=campaign, annotator=self.person)
        assert assignment is not None, "the campaign ran out of pairs before its budget"
        return assignment_display(assignment=assignment)

    def vote(self, campaign, token: str, picked: str) -> None:
        _vote, created = vote_cast(campaign=campaign, annotator=self.person, token=token, choice=picked)
        assert created


def writer(html: str) -> int:
    """The candidate that wrote an answer, as the simulated annotator reads it off the text."""
    return int(html.split("candidate ", 1)[1].split(" ", 1)[0])


def choice(rng, theta, left: int, right: int, noisy: bool, noise: float = NOISE) -> str:
    if rng.random() < CANNOT_DETERMINE:
        return "cannot_determine"
    if noisy and rng.random() < noise:
        return ["left", "right", "tie"][int(rng.integers(3))]
    p = 1 / (1 + math.exp(-(theta[left] - theta[right])))
    tie = 4 * TIE * p * (1 - p)
    draw = rng.random()
    return "tie" if draw < tie else "left" if draw < tie + p - tie / 2 else "right"


def run_campaign(*, design, dataset, models, people, clients, theta, budget, seed, refresh, noise=NOISE) -> dict:
    """One campaign voted through the API to its budget: widths at the checkpoints, final estimates."""
    slug = f"{design}-{len(models)}-{seed}-{abs(hash(tuple(theta))) % 10_000}"
    options = (
        {"sampling": Campaign.Sampling.ADAPTIVE, "budget": budget, "uniform_share": 0.2}
        if design == "adaptive"
        else {"question_count": QUESTIONS, "pairs_per_question": budget // QUESTIONS}
    )
    campaign = campaign_create(
        slug=slug, title=slug, dataset=dataset, candidates=models, annotators=people, seed=seed, **options
    )
    run_queued_figures()
    rng = np.random.default_rng(seed)
    marks = {int(round(fraction * budget)): fraction for fraction in CHECKPOINTS}
    widths, errors, counts = {}, {}, {"tie": 0, "cannot_determine": 0}
    spent = 0.0  # CPU seconds inside next-pair and vote
    final: dict = {}
    for vote in range(1, budget + 1):
        who = vote % ANNOTATORS
        started = time.process_time()
        shown = clients[who].next_pair(campaign)
        spent += time.process_time() - started
        picked = choice(
            rng, theta, writer(shown["left_html"]), writer(shown["right_html"]), noisy=who == 0, noise=noise
        )
        counts[picked] = counts.get(picked, 0) + 1
        started = time.process_time()
        clients[who].vote(campaign, shown["token"], picked)
        spent += time.process_time() - started
        if design == "adaptive" and vote % refresh == 0:
            run_queued_figures()
        if vote in marks:
            report = bt_report(campaign=campaign, rounds=ROUNDS, seed=0)
            scores = report["scores"]
            complete = len(scores) == len(models) and all(score["lower"] is not None for score in scores)
            widths[marks[vote]] = np.mean([s["upper"] - s["lower"] for s in scores]) if complete else np.nan
            by_label = {score["label"]: score["score"] for score in scores}
            errors[marks[vote]] = (
                np.array([by_label[model.name] for model in models]) - (theta - theta.mean()) if complete else None
            )
            final = report
    by_model = {score["label"]: score for score in final["scores"]}
    estimate = np.array([by_model[model.name]["score"] for model in models])
    lower = np.array([by_model[model.name]["lower"] for model in models])
    upper = np.array([by_model[model.name]["upper"] for model in models])
    return {
        "cpu_per_vote": spent / budget,
        "widths": widths,
        "errors": errors,
        "estimate": estimate,
        "lower": lower,
        "upper": upper,
        "counts": counts,
    }


# How votes_to_reach found its answer.
CROSSED, BEYOND, ALREADY = "", " (extrapolated past the budget)", " or fewer (already below at the first checkpoint)"


def votes_to_reach(target: float, budget: int, curve: dict) -> tuple[float, str]:
    """Votes at which a curve (width or RMSE by checkpoint) first comes down to `target`,
    interpolated in log-log, and how: CROSSED between two checkpoints, BEYOND the budget
    (extrapolated by ~ 1/sqrt(votes)), or ALREADY below at the first checkpoint (then the first
    checkpoint's votes, an upper bound)."""
    points = sorted((fraction * budget, width) for fraction, width in curve.items() if np.isfinite(width))
    if points and points[0][1] <= target:
        return points[0][0], ALREADY
    for (v0, w0), (v1, w1) in zip(points, points[1:], strict=False):
        if w0 > target >= w1:
            slope = (math.log(v1) - math.log(v0)) / (math.log(w1) - math.log(w0))
            return math.exp(math.log(v0) + (math.log(target) - math.log(w0)) * slope), CROSSED
    last_votes, last_width = points[-1]
    return last_votes * (last_width / target) ** 2, BEYOND


def width_curve(runs: list[dict]) -> dict:
    """The mean 95 % interval width at each checkpoint, over the runs that had every interval."""
    return {f: float(np.nanmean([run["widths"][f] for run in runs])) for f in CHECKPOINTS}


def rmse_curve(runs: list[dict]) -> dict:
    """The root mean square error against the truth at each checkpoint, over runs and models."""
    return {
        f: float(np.sqrt(np.mean([run["errors"][f] ** 2 for run in runs if run["errors"][f] is not None])))
        for f in CHECKPOINTS
    }


def saving_with_interval(fixed: list[dict], adaptive: list[dict], budget: int, curve_of, rounds: int = 1000):
    """(share of the votes saved, how it was found, 95 % interval low, high): the adaptive votes needed to
    reach the fixed design's final value, and a percentile interval over `rounds` resamples of the
    seeds of each design (how much of the difference 20 seeds can tell from luck)."""
    votes, how = votes_to_reach(curve_of(fixed)[1.0], budget, curve_of(adaptive))
    rng = np.random.default_rng(0)
    resampled = []
    for _ in range(rounds):
        some_fixed = [fixed[k] for k in rng.integers(0, len(fixed), len(fixed))]
        some_adaptive = [adaptive[k] for k in rng.integers(0, len(adaptive), len(adaptive))]
        resampled.append(votes_to_reach(curve_of(some_fixed)[1.0], budget, curve_of(some_adaptive))[0])
    low, high = np.percentile(resampled, [2.5, 97.5])
    return 1 - votes / budget, how, 1 - high / budget, 1 - low / budget


def summary(theta: np.ndarray, runs: list[dict]) -> dict:
    truth = theta - theta.mean()
    estimates = np.array([run["estimate"] for run in runs])
    covered = np.mean([(run["lower"] <= truth) & (truth <= run["upper"]) for run in runs])
    ties = sum(run["counts"]["tie"] for run in runs)
    undetermined = sum(run["counts"]["cannot_determine"] for run in runs)
    total = sum(sum(run["counts"].values()) for run in runs)
    return {
        "bias": float(np.abs(estimates.mean(axis=0) - truth).mean()),
        "rmse": float(np.sqrt(np.mean((estimates - truth) ** 2))),
        "spearman": float(np.mean([spearmanr(e, truth)[0] for e in estimates])),
        "kendall": float(np.mean([kendalltau(e, truth)[0] for e in estimates])),
        "coverage": float(covered),
        "ties": ties / (total - undetermined),
        "undetermined": undetermined / total,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--refresh", type=int, default=20, help="Votes between two refreshes of the design.")
    parser.add_argument("--wide", type=float, default=2.5, help="The wide spread: published strengths times this.")
    parser.add_argument("--noise", type=float, default=NOISE, help="The noisy annotator's share of random votes.")
    parser.add_argument(
        "--only", default="", help="Run only the scenarios whose name contains this (none matching: the costs only)."
    )
    parser.add_argument(
        "--via",
        choices=["services", "api"],
        default="services",
        help="services: assignment_next and vote_cast, as the API calls them (default); api: the HTTP "
        "endpoints through the Django test client (the same figures, 2-3 times the time).",
    )
    parser.add_argument("--quick", action="store_true", help="2 seeds, budgets of 200 votes: a smoke run.")
    args = parser.parse_args()
    if not LEADERBOARD.exists():
        print(f"Needs {LEADERBOARD} (the shared public data): not found.")
        return
    seeds = 2 if args.quick else args.seeds
    print("The ceiling: votes the best design for the true strengths saves against uniform pairs (Fisher)")
    for name, theta, _budget in scenarios(args.wide)[:2]:
        cells = ", ".join(
            f"x{scale:g}: {100 * ceiling_saving(scale * theta):4.1f}%" for scale in (0.5, 1, 1.5, 2, 2.5, 3)
        )
        print(f"  {name.split(',')[0]:>9} (sd {theta.std(ddof=1):.2f} at x1): {cells}")
    people = annotators()
    clients: list = [(ApiAnnotator if args.via == "api" else ServiceAnnotator)(person) for person in people]
    draw_cost(people, sizes=(200,) if args.quick else (200, 2000))
    worlds = {}
    for name, theta, budget in scenarios(args.wide):
        if args.only and args.only not in name:
            continue
        if args.quick:
            budget = budget // 10 // QUESTIONS * QUESTIONS or QUESTIONS
        if len(theta) not in worlds:
            worlds[len(theta)] = world(len(theta), QUESTIONS, people)
        dataset, models = worlds[len(theta)]
        began, cpu = time.perf_counter(), time.process_time()
        finals: dict = {}
        cost: dict = {}
        for design in ("fixed", "adaptive"):
            runs = [
                run_campaign(
                    design=design,
                    dataset=dataset,
                    models=models,
                    people=people,
                    clients=clients,
                    theta=theta,
                    budget=budget,
                    seed=seed,
                    refresh=args.refresh,
                    noise=args.noise,
                )
                for seed in range(seeds)
            ]
            finals[design] = summary(theta, runs)
            cost[design] = runs
        print(
            f"\n{name}: sd {theta.std(ddof=1):.2f}, budget {budget} votes, {seeds} seeds "
            f"({time.perf_counter() - began:.0f} s, {time.process_time() - cpu:.0f} s of CPU)"
        )
        for label, curve_of in (("mean 95 % interval width", width_curve), ("RMSE against the truth", rmse_curve)):
            curves = {design: curve_of(cost[design]) for design in cost}
            print(f"  {label} at " + ", ".join(f"{int(f * 100)}%" for f in CHECKPOINTS) + " of the budget")
            for design in ("fixed", "adaptive"):
                print(f"    {design:>8}: " + " ".join(f"{curves[design][f]:.3f}" for f in CHECKPOINTS))
            saving, how, low, high = saving_with_interval(cost["fixed"], cost["adaptive"], budget, curve_of)
            print(
                f"    the fixed design's final value {curves['fixed'][1.0]:.3f} after {budget} votes: adaptive "
                f"{budget * (1 - saving):.0f}{how}, "
                f"{100 * saving:+.1f}% votes saved (95 % interval over the seeds {100 * low:+.1f}% to {100 * high:+.1f}%)"
            )
        per_vote = {design: 1000 * np.mean([run["cpu_per_vote"] for run in cost[design]]) for design in cost}
        print(
            f"  CPU per next-pair + vote: fixed {per_vote['fixed']:.1f} ms, adaptive {per_vote['adaptive']:.1f} ms "
            f"({per_vote['adaptive'] / per_vote['fixed']:.2f}x; the design's refreshes are the worker's, not counted)"
        )
        for design in ("fixed", "adaptive"):
            row = finals[design]
            print(
                f"    {design:>8}: bias {row['bias']:.3f}, RMSE {row['rmse']:.3f}, Spearman {row['spearman']:.3f}, "
                f"Kendall {row['kendall']:.3f}, interval covers the truth {100 * row['coverage']:.0f}%, "
                f"ties {100 * row['ties']:.0f}%, cannot determine {100 * row['undetermined']:.0f}%"
            )


if __name__ == "__main__":
    main()
