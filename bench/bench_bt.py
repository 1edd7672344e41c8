"""Bradley-Terry with bootstrap intervals: stats/ranking.py against FastChat's own code, same votes.

Synthetic votes (15 % ties) over `--models` models, as label strings, the way both receive them
from storage. Userbench: `pair_counts_of` (labels -> indices and per-pair counts, vectorised) then
`bradley_terry` (one fit plus `--rounds` bootstrap rounds, multinomial redraws of the aggregated
cells fitted together by Newton's method). FastChat: `compute_bt` plus `compute_bootstrap_bt` of
fastchat/serve/monitor/rating_systems.py (the Arena leaderboard's code: pandas, scipy's L-BFGS per
round on the unique (pair, outcome) rows, rounds in a process pool over every core), from the
DataFrame of the same votes; and, to separate the pool's cost from the algorithm's, FastChat's
own steps (preprocess_for_bt, the multinomial redraw, fit_bt per round) in one process. Both fits are unregularised (alpha 0, FastChat's); the largest
difference between the two point estimates is printed in Elo points (FastChat stops at its
gradient tolerance 1e-6, so a few hundredths of a point are expected).

FastChat runs in its own interpreter (it needs pandas, which Userbench does not): `--fastchat-python`,
else $FASTCHAT_PYTHON, else /tmp/fastchat-venv/bin/python (bench/README.md says how to make it),
else this interpreter. Without one that imports FastChat's rating_systems, only Userbench's side is
timed and the script says so. Each side is timed `--repeats` times in turns (one of Userbench's,
one of FastChat's, and again) and its best time kept (a shared machine's load only ever adds
time); the CPU seconds each side used are printed too (FastChat's with its pool's workers), a
ratio that the machine's load moves much less than the times.

    .venv/bin/python bench/bench_bt.py [--votes 1000000] [--models 100] [--rounds 100] [--small 1000x10,10000x30]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from stats import ranking, tallies  # noqa: E402  (pure modules, no Django)
from stats.elo import to_elo  # noqa: E402

DEFAULT_FASTCHAT_PYTHON = "/tmp/fastchat-venv/bin/python"
FASTCHAT_MODULE = "fastchat.serve.monitor.rating_systems"
WINNERS = np.array(["a", "b", "tie"], dtype=object)

# Run by FastChat's interpreter: reads the votes, builds FastChat's DataFrame (not timed: it is the
# loading both sides do before their statistics), then times FastChat's own functions.
FASTCHAT_BT = """
import json, resource, sys, time
import numpy as np, pandas as pd
from fastchat.serve.monitor.rating_systems import compute_bt, compute_bootstrap_bt, fit_bt, preprocess_for_bt
data = np.load(sys.argv[1], allow_pickle=True)
rounds, repeats = int(sys.argv[2]), int(sys.argv[3])
names = {"a": "model_a", "b": "model_b", "tie": "tie"}
df = pd.DataFrame({"model_a": data["a"], "model_b": data["b"], "winner": [names[w] for w in data["w"]]})

def cpu():
    # This process's CPU seconds and those of its finished children (the pool's workers).
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime

times = []
for _ in range(repeats):
    started, cpu_started = time.perf_counter(), cpu()
    ratings = compute_bt(df)
    fitted = time.perf_counter()
    boot = compute_bootstrap_bt(df, num_round=rounds)
    booted, cpu_used = time.perf_counter(), cpu() - cpu_started
    # The same work in this one process, without the pool: FastChat's functions, its steps.
    matchups, outcomes, models, weights = preprocess_for_bt(df)
    draws = np.random.default_rng(0).multinomial(len(df), weights / weights.sum(), size=rounds) / len(df)
    for w in draws:
        fit_bt(matchups, outcomes, w, len(models), np.log(10.0), 1e-6)
    times.append((fitted - started, booted - fitted, time.perf_counter() - booted, cpu_used))
print(json.dumps({"times": times, "ratings": {k: float(v) for k, v in ratings.items()}}))
"""


def synthetic(votes: int, models: int, seed: int = 0) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """(labels, model_a, model_b, winner): object arrays of label strings and of "a", "b", "tie"."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, models)
    i = rng.integers(0, models, votes)
    j = (i + rng.integers(1, models, votes)) % models
    p = 1 / (1 + np.exp(strength[j] - strength[i]))
    outcome = np.where(rng.random(votes) < 0.15, 2, np.where(rng.random(votes) < p, 0, 1))
    labels = np.array([f"model-{k:03d}" for k in range(models)], dtype=object)
    return labels.tolist(), labels[i], labels[j], WINNERS[outcome]


def fastchat_python(explicit: str | None) -> str | None:
    """The first interpreter that imports FastChat's rating_systems, or None."""
    candidates = [explicit, os.environ.get("FASTCHAT_PYTHON"), DEFAULT_FASTCHAT_PYTHON, sys.executable]
    for python in candidates:
        if not python or not Path(python).exists():
            continue
        probe = subprocess.run([python, "-c", f"import {FASTCHAT_MODULE}"], capture_output=True)
        if probe.returncode == 0:
            return python
    return None


def run_fastchat(python: str, script: str, arrays: dict, *args) -> dict:
    """Run `script` in FastChat's interpreter on the votes in `arrays`; its JSON answer."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "votes.npz"
        np.savez(path, **arrays)
        done = subprocess.run([python, "-c", script, str(path), *map(str, args)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"FastChat's side failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def time_ours(labels, model_a, model_b, winner, rounds: int, repeats: int):
    """Best of `repeats`: (counting s, fit and bootstrap s, CPU s), and the result."""
    best = None
    for _ in range(repeats):
        cpu_started = time.process_time()
        started = time.perf_counter()
        counts = tallies.pair_counts_of(labels, model_a, model_b, winner)
        counted = time.perf_counter()
        result = ranking.bradley_terry(counts, alpha=0, rounds=rounds, seed=0)
        finished = time.perf_counter()
        turn = (counted - started, finished - counted, time.process_time() - cpu_started)
        if best is None or finished - started < best[0] + best[1]:
            best = turn
    return best, result


def compare(votes: int, models: int, rounds: int, repeats: int, python: str | None) -> None:
    labels, model_a, model_b, winner = synthetic(votes, models)
    # In turns, one of each side at a time, so that both meet the machine's load of the same minutes.
    ours_turns, their_turns = [], []
    for _ in range(repeats):
        ours_turns.append(time_ours(labels, model_a, model_b, winner, rounds, repeats=1))
        if python is not None:
            arrays = {"a": model_a, "b": model_b, "w": winner}
            their_turns.append(run_fastchat(python, FASTCHAT_BT, arrays, rounds, 1))
    count_s, fit_s, _ = min((turn for turn, _ in ours_turns), key=lambda turn: turn[0] + turn[1])
    ours_cpu = min(turn[2] for turn, _ in ours_turns)
    result = ours_turns[0][1]
    ours = count_s + fit_s
    print(
        f"{votes:>9,} votes, {models} models, fit + {rounds} rounds: Userbench {ours:6.2f} s "
        f"(counting {count_s:.2f} s, fit and bootstrap {fit_s:.2f} s; CPU {ours_cpu:.2f} s)",
        flush=True,
    )
    if python is None:
        return
    turns = [turn for answer in their_turns for turn in answer["times"]]
    fit_t, boot_t, _, _ = min(turns, key=lambda turn: turn[0] + turn[1])
    theirs = fit_t + boot_t
    theirs_cpu = min(turn[3] for turn in turns)
    serial = fit_t + min(turn[2] for turn in turns)
    scores = {s.label: s.score for s in result.scores}
    elo = dict(zip(scores, to_elo(np.array(list(scores.values())))))
    difference = max(abs(elo[label] - rating) for label, rating in their_turns[0]["ratings"].items())
    print(
        f"{'':>9}  FastChat {theirs:6.2f} s (compute_bt {fit_t:.2f} s, compute_bootstrap_bt {boot_t:.2f} s; "
        f"CPU {theirs_cpu:.2f} s with its pool's): Userbench {theirs / ours:.1f}x faster, "
        f"{theirs_cpu / ours_cpu:.1f}x less CPU; point estimates differ by at most {difference:.3f} Elo",
        flush=True,
    )
    print(
        f"{'':>9}  FastChat's steps in one process, without its pool: {serial:6.2f} s: Userbench {serial / ours:.1f}x faster",
        flush=True,
    )


def comparison_main(*, doc: str, votes: int, models: int, small: str, repeats: int, warm_up, compare) -> None:
    """The command line both FastChat comparisons share: sizes, rounds, repeats and FastChat's
    interpreter; `warm_up()` loads what Userbench's side imports before anything is timed."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--votes", type=int, default=votes)
    parser.add_argument("--models", type=int, default=models)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--small", default=small, help="smaller sets also compared: votes x models, comma-separated")
    parser.add_argument("--repeats", type=int, default=repeats)
    parser.add_argument("--fastchat-python", help="an interpreter that imports FastChat (see bench/README.md)")
    args = parser.parse_args()
    warm_up()
    python = fastchat_python(args.fastchat_python)
    if python is None:
        print(
            f"FastChat is not importable ({FASTCHAT_MODULE}) from --fastchat-python, $FASTCHAT_PYTHON, "
            f"{DEFAULT_FASTCHAT_PYTHON} or this interpreter: timing Userbench's side only. "
            "bench/README.md gives the commands that make a throwaway FastChat environment."
        )
    else:
        print(f"FastChat from {python}")
    sizes = [tuple(int(x) for x in size.split("x")) for size in args.small.split(",") if size]
    for n_votes, n_models in [*sizes, (args.votes, args.models)]:
        compare(n_votes, n_models, args.rounds, args.repeats, python)


def main():
    comparison_main(
        doc=__doc__,
        votes=1_000_000,
        models=100,
        small="1000x10,10000x30",
        repeats=3,
        # Load choix and scipy and take numpy's first-call costs before anything is timed, as
        # FastChat's interpreter imports its modules before its clock starts.
        warm_up=lambda: time_ours(*synthetic(200, 5), rounds=5, repeats=1),
        compare=compare,
    )


if __name__ == "__main__":
    main()
