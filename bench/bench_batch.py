"""The same judge run live and through the Batch API, side by side: what each costs from the usage
it recorded, and how long each takes.

Two loopback servers with the same replies and usage (tests/judging/fake_batch.py) answer a live
call after --latency seconds and finish a batch --complete-after seconds after it was made. The
live run sends its calls through a window of --concurrency (`judge --inline`'s execution); the
batch run uploads its file, makes its batch and looks at it every --poll seconds until it is done
(`judge --batch --inline`'s). Both endpoints have the same prices (GPT-4o's by default); the batch
price is left blank, so it is half the live one. Each run's cost is what `run_progress` prices from
the tokens the run recorded, as its page and `judge` show. Printed: calls, tokens, cost and wall
time of each, and the batch/live ratios. The batch's wall time is the provider's delay plus at most
one poll, whatever the number of calls; the live run's grows with the calls.

    .venv/bin/python bench/bench_batch.py [--items 400] [--latency 0.2] [--concurrency 16]
        [--complete-after 5] [--poll 0.5]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._django import setup_django  # noqa: E402

setup_django()

# Imported after Django is set up (they import the models).
from curation.models import Dataset, Item  # noqa: E402
from judging.engine.batch import run_batch_inline  # noqa: E402
from judging.engine.execution import run_execute_inline  # noqa: E402
from judging.models import Answer, CandidateModel, JudgeRun  # noqa: E402
from judging.results.selectors import run_progress  # noqa: E402
from judging.runs.creation import run_create  # noqa: E402
from judging.runs.spec import RunSpec  # noqa: E402
from llm.models import Endpoint  # noqa: E402
from tests.judging.fake_batch import FakeBatchLLM  # noqa: E402


def one(*, batch: bool, args, dataset: Dataset, model: CandidateModel) -> dict:
    server = FakeBatchLLM(latency=args.latency, complete_after=args.complete_after)
    server.start()
    try:
        tag = f"{'batch' if batch else 'live'}-{time.time_ns()}"
        endpoint = Endpoint.objects.create(
            name=tag,
            base_url=server.base_url,
            api_key_env="",
            max_in_flight=args.concurrency,
            timeout_seconds=30,
            input_price_per_million=Decimal(args.input_price),
            output_price_per_million=Decimal(args.output_price),
        )
        run = run_create(
            spec=RunSpec(
                dataset=dataset,
                mode="pointwise",
                judge_model="judge-m",
                candidates=(model,),
                endpoint=endpoint,
                concurrency=args.concurrency,
                batch=batch,
            )
        )
        started = time.perf_counter()
        run_batch_inline(run=run) if batch else run_execute_inline(run=run)
        wall = time.perf_counter() - started
        run = JudgeRun.objects.select_related("endpoint").get(pk=run.pk)
        progress = run_progress(run=run)
        return {
            "status": run.status,
            "calls": run.replied,
            "live_calls": server.count,
            "uploads": len(server.uploads),
            "batches": len(server.creates),
            "prompt_tokens": run.prompt_tokens,
            "completion_tokens": run.completion_tokens,
            "cost": progress["estimated_cost"],
            "wall": wall,
        }
    finally:
        server.stop()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds a live call takes")
    parser.add_argument("--concurrency", type=int, default=16, help="the live run's calls in flight")
    parser.add_argument("--complete-after", type=float, default=5.0, help="seconds the provider takes for a batch")
    parser.add_argument("--poll", type=float, default=0.5, help="seconds between two looks at a batch")
    parser.add_argument("--input-price", default="2.50", help="per million input tokens (live)")
    parser.add_argument("--output-price", default="10.00", help="per million output tokens (live)")
    args = parser.parse_args(argv)
    os.environ["LLM_BATCH_POLL_SECONDS"] = str(args.poll)
    from django.conf import settings

    settings.LLM_BATCH_POLL_SECONDS = args.poll
    settings.LLM_ALLOWED_INTERNAL_HOSTS = ["127.0.0.0/8", "::1", "localhost"]

    dataset = Dataset.objects.create(name=f"bench-batch-{time.time_ns()}")
    model = CandidateModel.objects.create(name=f"bench-batch-model-{time.time_ns()}")
    items = Item.objects.bulk_create(
        [
            Item(dataset=dataset, external_id=f"q{n}", question=f"Question {n}: " + "words " * 40, reference="ref")
            for n in range(args.items)
        ]
    )
    Answer.objects.bulk_create([Answer(item=item, model=model, text="An answer. " * 30) for item in items])

    live = one(batch=False, args=args, dataset=dataset, model=model)
    batched = one(batch=True, args=args, dataset=dataset, model=model)
    print(
        f"{args.items} calls; live: {args.latency:g} s a call, {args.concurrency} in flight; batch: done "
        f"{args.complete_after:g} s after it is made, looked at every {args.poll:g} s; prices "
        f"{args.input_price}/{args.output_price} per million tokens (batch: half)"
    )
    for name, result in (("live ", live), ("batch", batched)):
        print(
            f"{name}: {result['status']}, {result['calls']} replies ({result['live_calls']} live calls, "
            f"{result['uploads']} upload(s), {result['batches']} batch(es)), tokens {result['prompt_tokens']}+"
            f"{result['completion_tokens']}, cost {result['cost']:.4f}, wall {result['wall']:.2f} s"
        )
    cost_ratio = batched["cost"] / live["cost"] if live["cost"] else float("nan")
    print(
        f"batch/live: cost {cost_ratio:.3f}x (same tokens: {batched['prompt_tokens'] == live['prompt_tokens']}), "
        f"wall {batched['wall'] / live['wall']:.2f}x "
        f"(batch wall - provider's delay = {batched['wall'] - args.complete_after:.2f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
