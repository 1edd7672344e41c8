"""The CPU of one refresh of a campaign's reliability figures at the stress size, before and after.

    .venv/bin/python bench/bench_reliability_fit.py [--before 648c64e] [--rounds 200] [--votes 10000]
        [--annotators 200] [--careless 10] [--seed 0] [--profile]

The votes of the stress scenario (bench/_annotation_stress.py) part-way through: 8 models x 200
questions, every model pair on every question, 5 votes a pair, 200 annotators, of which --votes
(10,000) have arrived, each (question, pair)'s votes cast by different annotators; --careless of
the annotators cast 40 % of their votes at random (tests/stats/simulated_votes.py's voters), the
others vote carefully on strengths spread as ChineseAlpacaEval's 8 (about -3 to +2). Built in
memory, no Django: what the background task runs is stats/reliability.py's reliability_fit with
annotation/reliability_report.py's RELIABILITY_ROUNDS bootstrap rounds.

Side by side in one run, each in its own process with the same votes: the code of --before (a git
revision, exported with `git archive` to a temporary directory) and the working tree. What is
timed is the process's CPU (time.process_time: all its threads, BLAS's included) of one fit with
its bootstrap rounds, so the figure holds under load; the wall time is printed beside it. The
two fits' point estimates and intervals are compared. The code of --before is also run with
OPENBLAS_NUM_THREADS=1: its 208 x 208 factorisations called threaded OpenBLAS, whose threads
spin while they wait for a core on a busy machine. --profile runs the working tree's fit under
cProfile and prints where the time goes.
"""

import argparse
import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

THETA = np.array([2.06, 1.25, 0.71, 0.2, -0.35, -0.94, -1.7, -3.1])
CHILD = """
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
from stats.reliability import AnnotatorVotes, reliability_fit, reliability_intervals, strength_intervals
data = np.load(sys.argv[2])
n, k_count = int(data["models"]), int(data["annotators"])
votes = AnnotatorVotes(
    labels=[f"m{i}" for i in range(n)], annotators=[f"a{k}" for k in range(k_count)],
    annotator=data["annotator"], first=data["first"], second=data["second"],
    outcome=data["outcome"], question=data["question"],
)
started, wall = time.process_time(), time.perf_counter()
fit = reliability_fit(votes, rounds=int(sys.argv[3]), seed=0)
cpu, wall = time.process_time() - started, time.perf_counter() - wall
lower, upper = strength_intervals(fit)
r_lower, r_upper = reliability_intervals(fit)
print(json.dumps({
    "cpu": cpu, "wall": wall, "scores": fit.scores.tolist(), "reliability": fit.reliability.tolist(),
    "lower": lower.tolist(), "upper": upper.tolist(), "r_lower": r_lower.tolist(), "r_upper": r_upper.tolist(),
    "skipped": fit.skipped_rounds,
}))
"""


def stress_votes(*, votes: int, annotators: int, careless: int, seed: int, questions: int = 200) -> dict:
    """The first `votes` votes of a fixed campaign (every pair on every question, 5 votes a pair)."""
    from tests.stats.simulated_votes import CAREFUL, CARELESS, vote

    rng = np.random.default_rng(seed)
    n = len(THETA)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    slots = np.array([(q, p) for q in range(questions) for p in range(len(pairs)) for _ in range(5)])
    slots = slots[rng.permutation(len(slots))[:votes]]
    kinds = [CARELESS if k < careless else CAREFUL for k in range(annotators)]
    columns: dict[str, list[int]] = {"first": [], "second": [], "outcome": [], "annotator": [], "question": []}
    voted: dict[tuple[int, int], set[int]] = {}
    for q, p in slots:
        seen = voted.setdefault((int(q), int(p)), set())
        who = int(rng.integers(annotators))
        while who in seen:
            who = int(rng.integers(annotators))
        seen.add(who)
        i, j = pairs[p] if rng.random() < 0.5 else pairs[p][::-1]
        columns["first"].append(i)
        columns["second"].append(j)
        columns["outcome"].append(vote(rng, THETA, i, j, kinds[who]))
        columns["annotator"].append(who)
        columns["question"].append(int(q))
    return {key: np.array(value, dtype=np.int64) for key, value in columns.items()}


def exported(revision: str, into: Path) -> Path:
    """The stats/ package of `revision`, unpacked under `into`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", revision, "stats"], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def measured(tree: Path, data: Path, rounds: int, one_thread: bool) -> dict:
    env = {**os.environ, **({"OPENBLAS_NUM_THREADS": "1"} if one_thread else {})}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(tree), str(data), str(rounds)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return json.loads(out.stdout)


def profiled(columns: dict, rounds: int, top: int) -> None:
    from stats import reliability

    votes = reliability.AnnotatorVotes(
        labels=[f"m{i}" for i in range(len(THETA))],
        annotators=[f"a{k}" for k in range(int(columns["annotator"].max()) + 1)],
        **columns,
    )
    cells = reliability.cells_of(votes)
    print(
        f"cells (annotator, pair): {len(cells.annotator)}, (question, cell) rows: {len(cells.row_cell)}, "
        f"parameters per round: {cells.n_models} strengths + {cells.n_annotators} reliabilities, "
        f"x {rounds} rounds = {(cells.n_models + cells.n_annotators) * rounds}"
    )
    profile = cProfile.Profile()
    profile.enable()
    reliability.reliability_fit(votes, rounds=rounds, seed=0)
    profile.disable()
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(top)
    print(text.getvalue())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--before",
        default="648c64e",
        help="the git revision to compare with (default: the last with the former solver)",
    )
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--votes", type=int, default=10_000)
    parser.add_argument("--annotators", type=int, default=200)
    parser.add_argument("--careless", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    columns = stress_votes(votes=args.votes, annotators=args.annotators, careless=args.careless, seed=args.seed)
    if args.profile:
        profiled(columns, args.rounds, args.top)
        return
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "votes.npz"
        np.savez(data, models=len(THETA), annotators=args.annotators, **columns)
        before_tree = exported(args.before, Path(scratch) / "before")
        print(
            f"{args.votes} votes, {len(THETA)} models, {args.annotators} annotators ({args.careless} careless), "
            f"{args.rounds} bootstrap rounds; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )
        threads = os.environ.get("OPENBLAS_NUM_THREADS", "OpenBLAS's default")
        results = {}
        for name, tree, one in (
            (f"before ({args.before})", before_tree, False),
            ("before, 1 BLAS thread", before_tree, True),
            ("after (working tree)", ROOT, False),
        ):
            results[name] = result = measured(tree, data, args.rounds, one)
            print(
                f"{name:<24} BLAS threads {'1' if one else threads:<18} CPU {result['cpu']:6.2f} s   "
                f"wall {result['wall']:6.2f} s   skipped rounds {result['skipped']}"
            )
        before, _one_thread, after = results.values()
        print(
            f"CPU ratio before / after: {before['cpu'] / after['cpu']:.1f}x; load average now {os.getloadavg()[0]:.1f}"
        )
        for key in ("scores", "reliability", "lower", "upper", "r_lower", "r_upper"):
            gap = np.nanmax(np.abs(np.array(before[key], dtype=float) - np.array(after[key], dtype=float)))
            print(f"largest difference in {key}: {gap:.2e}")


if __name__ == "__main__":
    main()
