"""Arena-Hard-Auto's own scoring against Userbench's, on the same synthetic verdicts.

Synthetic judgments (each question judged in both orders against gpt-4-0314, the five verdicts
drawn per model, a few replies with no verdict) and synthetic answers (lengths and markdown
counts drawn per model) are written in Arena-Hard-Auto's own layout to a temporary folder; its
`show_result.py` (the sklearn version: show_result.py at 0489bf38, utils_math.py at 561534a6,
utils.py at 0489bf38) scores them there, run by another Python (a throwaway virtualenv with
pandas, scikit-learn, tqdm, pyyaml and requests), once plain and once with `--style-control`;
Userbench's judging/papers/arena_scores.py scores the same battles. The scores must agree to
0.01 points; the 95 % intervals, drawn by different random generators, within bootstrap noise
(the spread of Userbench's own limits over 20 seeds).

    python bench/bench_arena_hard_parity.py --arena-hard DIR --python PY [--questions 500] [--seed 1]

DIR holds Arena-Hard-Auto's show_result.py, utils_math.py and utils.py (ARENA_HARD_DIR);
PY is the Python of a virtualenv that runs them (ARENA_HARD_PYTHON). Neither is in this
repository: bench/README.md says how to make them. Pure: no Django, no database.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from judging.papers.arena_scores import Battle, arena_scores, style_controlled  # noqa: E402

BASELINE = "gpt-4-0314"
BENCH = "arena-hard-v0.1"
JUDGE = "gpt-4-1106-preview"
# Per model: the chances of A>>B, A>B, A=B, B>A, B>>A and of no verdict, from the model's side
# (the first two: the model much or slightly better), and its answers' style.
MODELS = {
    "strong-m": ((0.30, 0.30, 0.15, 0.15, 0.05, 0.05), 700, 3.0),
    "even-m": ((0.10, 0.25, 0.25, 0.25, 0.10, 0.05), 450, 1.0),
    "weak-m": ((0.03, 0.12, 0.15, 0.35, 0.30, 0.05), 300, 0.5),
}
BASE_STYLE = (420, 1.0)
LABELS = ("A>>B", "A>B", "A=B", "B>A", "B>>A", "none")
SWAP = {"A>>B": "B>>A", "A>B": "B>A", "A=B": "A=B", "B>A": "A>B", "B>>A": "A>>B", "none": "none"}


def style(rng, length: int, markdown: float) -> dict:
    return {
        "token_len": int(rng.poisson(length)),
        "header_count": {f"h{n}": int(rng.poisson(markdown / 2)) for n in range(1, 3)},
        "list_count": {"ordered": int(rng.poisson(markdown * 2)), "unordered": int(rng.poisson(markdown))},
        "bold_count": {"**": int(rng.poisson(markdown)), "__": 0},
    }


def synthetic(questions: int, seed: int):
    """(answers {model: {qid: conv_metadata}}, judgments {model: [{question_id, games}]})."""
    rng = np.random.default_rng(seed)
    answers = {BASELINE: {f"q{n}": style(rng, *BASE_STYLE) for n in range(questions)}}
    judgments = {}
    for model, (chances, length, markdown) in MODELS.items():
        answers[model] = {f"q{n}": style(rng, length, markdown) for n in range(questions)}
        rows = []
        for n in range(questions):
            games = []
            for game in range(2):
                said = LABELS[rng.choice(len(LABELS), p=chances)]  # from the model's side, as A
                # Game 1 shows the baseline as A; game 2 the model as A (show_result.py's convention).
                label = SWAP[said] if game == 0 else said
                games.append({"score": None if label == "none" else label})
            rows.append({"question_id": f"q{n}", "model": model, "judge": JUDGE, "games": games})
        judgments[model] = rows
    return answers, judgments


def write_layout(folder: Path, answers: dict, judgments: dict) -> None:
    (folder / "data" / BENCH / "model_answer").mkdir(parents=True)
    (folder / "data" / BENCH / "model_judgment" / JUDGE).mkdir(parents=True)
    (folder / "leaderboard").mkdir()
    for model, rows in answers.items():
        with (folder / "data" / BENCH / "model_answer" / f"{model}.jsonl").open("w") as out:
            for qid, meta in rows.items():
                turn = {"content": "...", "token_len": meta["token_len"]}
                line = {"question_id": qid, "model_id": model, "choices": [{"turns": [turn]}], "conv_metadata": meta}
                out.write(json.dumps(line) + "\n")
    for model, rows in judgments.items():
        with (folder / "data" / BENCH / "model_judgment" / JUDGE / f"{model}.jsonl").open("w") as out:
            out.writelines(json.dumps(row) + "\n" for row in rows)


def theirs(folder: Path, code: Path, python: str, *, style_control: bool) -> dict[str, tuple[float, float, float]]:
    """Arena-Hard-Auto's leaderboard CSV: {model: (score, q2.5, q97.5)}."""
    for old in (folder / "leaderboard").glob("*.csv"):
        old.unlink()
    command = [python, str(code / "show_result.py"), "--output", "--baseline", BASELINE, "--judge-name", JUDGE]
    if style_control:
        command.append("--style-control")
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"show_result.py failed:\n{done.stderr[-3000:]}")
    (written,) = (folder / "leaderboard").glob("*.csv")
    with written.open() as stream:
        return {
            row["model"]: (float(row["score"]), float(row["rating_q025"]), float(row["rating_q975"]))
            for row in csv.DictReader(stream)
        }


def battles_and_features(answers: dict, judgments: dict):
    """The same judgments as Userbench counts them: each game a battle of the model against the baseline."""
    side = {"A>>B": ("A", 2), "A>B": ("A", 1), "A=B": (None, 1), "B>A": ("B", 1), "B>>A": ("B", 2)}
    battles = []
    for model, rows in judgments.items():
        for row in rows:
            for game, verdict in enumerate(row["games"]):
                if verdict["score"] not in side:
                    continue
                winner_side, strength = side[verdict["score"]]
                model_side = "B" if game == 0 else "A"
                outcome = "tie" if winner_side is None else "win" if winner_side == model_side else "lose"
                weight = 3 if strength == 2 and outcome != "tie" else 1
                winner = {"win": "model", "lose": "baseline", "tie": "tie"}[outcome]
                battles.append(Battle(model=model, winner=winner, weight=weight, item=row["question_id"]))
    features = {
        (model, qid): {
            "length": meta["token_len"],
            "headers": sum(meta["header_count"].values()),
            "list_items": sum(meta["list_count"].values()),
            "bold": sum(meta["bold_count"].values()),
        }
        for model, rows in answers.items()
        for qid, meta in rows.items()
    }
    return battles, features


def compare(name: str, ours_by_seed: list[dict], arena: dict) -> list[str]:
    """Lines of the comparison, and AssertionError when a score differs by more than 0.01."""
    lines = [f"{name}: model, Arena-Hard-Auto score [q2.5, q97.5] | Userbench | Userbench's limits over seeds (sd)"]
    for model in sorted(arena, key=lambda m: -arena[m][0]):
        score, low, high = arena[model]
        mine = ours_by_seed[0][model]
        lows = [run[model][1] for run in ours_by_seed]
        highs = [run[model][2] for run in ours_by_seed]
        low_sd, high_sd = statistics.pstdev(lows), statistics.pstdev(highs)
        lines.append(
            f"  {model:<12} {score:6.2f} [{low:6.2f}, {high:6.2f}] | {round(mine[0], 2):6.2f} [{mine[1]:6.2f}, "
            f"{mine[2]:6.2f}] | [{statistics.mean(lows):6.2f} ({low_sd:.2f}), {statistics.mean(highs):6.2f} "
            f"({high_sd:.2f})]"
        )
        assert abs(round(mine[0], 2) - score) <= 0.01 + 1e-9, (name, model, mine[0], score)
        # Within bootstrap noise: Arena's limits lie within 3 sd (+0.05 for its rounding) of the mean of ours.
        for theirs_limit, ours, sd in ((low, lows, low_sd), (high, highs, high_sd)):
            assert abs(theirs_limit - statistics.mean(ours)) <= 3 * sd + 0.05, (name, model, theirs_limit, ours)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arena-hard", type=Path, default=os.environ.get("ARENA_HARD_DIR"))
    parser.add_argument("--python", default=os.environ.get("ARENA_HARD_PYTHON"))
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=20, help="Userbench bootstrap seeds for the noise estimate")
    args = parser.parse_args()
    if args.arena_hard is None or args.python is None:
        parser.error("give --arena-hard DIR and --python PY (or ARENA_HARD_DIR and ARENA_HARD_PYTHON)")
    answers, judgments = synthetic(args.questions, args.seed)
    battles, features = battles_and_features(answers, judgments)
    print(
        f"{args.questions} questions x {len(MODELS)} models x 2 orders: {len(battles)} battles, "
        f"{sum(b.weight for b in battles)} with significant wins counted 3 times"
    )
    with tempfile.TemporaryDirectory(prefix="arena-hard-parity-") as tmp:
        folder = Path(tmp)
        write_layout(folder, answers, judgments)
        arena_plain = theirs(folder, args.arena_hard, args.python, style_control=False)
        arena_style = theirs(folder, args.arena_hard, args.python, style_control=True)
    plain = [arena_scores(battles, baseline=BASELINE, seed=seed) for seed in range(args.seeds)]
    styled = [style_controlled(battles, features, baseline=BASELINE, seed=seed) for seed in range(args.seeds)]
    for line in compare("Plain", plain, arena_plain) + compare("Style control", styled, arena_style):
        print(line)
    print("Scores agree to 0.01 points; Arena's interval limits lie within 3 sd of Userbench's mean limits.")


if __name__ == "__main__":
    main()
