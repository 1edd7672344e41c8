"""What the judge diagnostics, the LC win rate and the manifest add to a run, as a researcher feels it.

A pairwise run judged in both orders (two candidates against a reference) is built directly in
the database at two sizes, N and 4N questions; for each size, measured side by side:
the leaderboard alone (`run_leaderboard`, now with the LC win rate), the judge diagnostics
(`run_diagnostics`), the manifest (`run_manifest_build`: hashes of the dataset and every answer),
and the whole run page as the browser gets it. Printed as ratios: what each costs against the
leaderboard, and how each grows with 4x the questions (4.0 is linear).

    .venv/bin/python bench/bench_run_page.py [--items 500] [--repeat 3]
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._django import setup_django  # noqa: E402

setup_django()

from django.contrib.auth import get_user_model  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

from core.workspaces import membership_set  # noqa: E402
from curation.models import Dataset, Item  # noqa: E402
from judging.models import Answer, CandidateModel, Judgment  # noqa: E402
from judging.results.boards import run_leaderboard  # noqa: E402
from judging.results.diagnostics import run_diagnostics  # noqa: E402
from judging.runs.creation import run_create  # noqa: E402
from judging.runs.manifest import run_manifest_build  # noqa: E402
from judging.runs.spec import RunSpec


def build(items: int, tag: str):
    """A dataset of `items` questions, two candidates and a reference, and a pairwise both-orders run
    whose judge prefers the first position 60 % of the time and the longer answer somewhat."""
    import random

    rng = random.Random(items)
    dataset = Dataset.objects.create(name=f"bench-{tag}")
    rows = Item.objects.bulk_create(
        Item(dataset=dataset, external_id=f"q{i}", question=f"Question {i}?", reference="R.") for i in range(items)
    )
    models = [CandidateModel.objects.get_or_create(name=name)[0] for name in ("cand-a", "cand-b", "ref")]
    lengths = {}
    answers = []
    for item in rows:
        for model in models:
            length = rng.randint(100, 1500)
            lengths[(item.pk, model.pk)] = length
            answers.append(Answer(item=item, model=model, text="x" * length))
    Answer.objects.bulk_create(answers, batch_size=2000)
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pairwise",
            judge_model="judge",
            candidates=tuple(models[:2]),
            reference_model=models[2],
            both_orders=True,
            seed=1,
            shard_size=100_000,
        ),
    )
    judgments = []
    for shard in run.shards.all():
        for item_id, model_id, order in shard.units:
            first, second = (model_id, models[2].pk) if order == 0 else (models[2].pk, model_id)
            longer_first = lengths[(item_id, first)] > lengths[(item_id, second)]
            first_wins = rng.random() < (0.7 if longer_first else 0.5)
            won = first_wins == (order == 0)
            judgments.append(
                Judgment(
                    run=run,
                    item_id=item_id,
                    model_id=model_id,
                    order=order,
                    outcome=Judgment.Outcome.WIN if won else Judgment.Outcome.LOSE,
                    raw_text="[...]",
                )
            )
    Judgment.objects.bulk_create(judgments, batch_size=2000)
    return run


def parts_of(run, client) -> dict:
    template_set = run.manifest["template_set"]
    return {
        "leaderboard (with LC win rate)": lambda: run_leaderboard(run=run),
        "diagnostics": lambda: run_diagnostics(run=run),
        "manifest": lambda: run_manifest_build(run=run, template_set=template_set, shard_size=100_000),
        "whole run page": lambda: client.get(f"/runs/{run.pk}/"),
    }


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    setup_test_environment()
    user = get_user_model().objects.create_user("bench-researcher")
    membership_set(user=user, roles=["researcher"])
    client = Client()
    client.force_login(user)
    measured = {}
    for items in (args.items, 4 * args.items):
        run = build(items, str(items))
        measured[items] = {name: best_of(args.repeat, fn) for name, fn in parts_of(run, client).items()}
        judgments = run.judgments.count()
        print(f"{items} questions, {judgments} judgments:")
        base = measured[items]["leaderboard (with LC win rate)"]
        for name, seconds in measured[items].items():
            print(f"  {name:<32} {1000 * seconds:8.1f} ms   {seconds / base:5.2f}x the leaderboard")
    small, large = measured[args.items], measured[4 * args.items]
    print("growth with 4x the questions (4.0 is linear):")
    for name in small:
        print(f"  {name:<32} {large[name] / small[name]:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
