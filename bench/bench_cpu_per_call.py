"""CPU per judge call through a worker's whole path, by layer, before and after, side by side.

A worker is one Python process: at 64 calls in flight against a fast server its CPU per call
decides how many calls a second it sustains. This measures that CPU (time.process_time: every
thread of the process, user and system time; not wall time) against a loopback server that
answers at once (`tests/judging/fake_llm.py --light --latency 0`, in processes of its own, so
its CPU is not counted), through the real code:

- prompt: the worker's feed (`RunSlice.feed`): each shard claimed, its items and answers read,
  each prompt filled and its answer checked for injection (`shard_plan`), the requests built;
- client: those requests through `llm.stream.CallStream` at 64 in flight: the response cache
  looked up, each call sent, received and read into a ChatResult, with the window and retries;
- parse: each reply turned into a Judgment (`judgment_for`: the verdict parsed);
- store: each batch of replies (BATCH, about what a quarter of a second brings at 700 calls a
  second) saved as a worker saves it: the response cache rows, then `RunSlice.save` (the
  judgments, the run's counts, finished shards), less the parse it does again;
- whole: `run_execute_inline` on a fresh run of the same size: the worker's path end to end,
  loop, hand-offs between the loop and the database thread, ticks and all; what it spends
  beyond the four layers is the loop and the hand-offs.

Each tree (this one, and `--before`, a commit of this repository exported to a temporary
folder) is measured in a fresh process with its own SQLite database, in turns, `--rounds`
times; the machine is shared, so the table gives each figure's median and its range. Half the
answers are English (1,500 characters), half Chinese (500 characters, full-width punctuation),
as in the URS data. Nothing asserts.

    .venv/bin/python bench/bench_cpu_per_call.py [--calls 3000] [--rounds 3] [--before REV]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IN_FLIGHT = 64
# Replies saved together: about what one flush (0.25 s) brings at 700 calls a second.
BATCH = 200
# The commit before the lean client path, the faster folding and the batched saves.
BEFORE = "6571079"
LAYERS = ("prompt", "client", "parse", "store")
ENGLISH = "The answer under review, as long as a typical one, with a figure or two: 42. " * 20
CHINESE = "巴黎是法国的首都，位于塞纳河畔，人口约两百万。它也是“光之城”，以博物馆和建筑闻名。" * 12


def start_server(processes: int) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.judging.fake_llm", "--light", "--latency", "0", "--processes", str(processes)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None  # a pipe, as asked
    return server, server.stdout.readline().strip()


def make_run(calls: int, endpoint, model):
    """A pointwise run over `calls` fresh items (nothing comes from the response cache)."""
    from curation.models import Dataset, Item
    from judging.models import Answer
    from judging.runs.creation import run_create
    from judging.runs.spec import RunSpec

    nonce = uuid.uuid4().hex[:10]
    dataset = Dataset.objects.create(name=f"bench-{nonce}")
    items = Item.objects.bulk_create(
        [
            Item(
                dataset=dataset,
                external_id=str(n),
                question=f"q {nonce} {n}" if n % 2 else f"问题 {nonce} {n}：法国的首都是哪里？",
                reference="r",
                intent="factual_qa",
                language="en" if n % 2 else "zh",
            )
            for n in range(calls)
        ]
    )
    Answer.objects.bulk_create(
        [
            Answer(item=item, model=model, text=f"{nonce} {item.pk} {ENGLISH if n % 2 else CHINESE}")
            for n, item in enumerate(items)
        ]
    )
    return run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="bench-judge",
            candidates=(model,),
            endpoint=endpoint,
            concurrency=IN_FLIGHT,
        )
    )


def cpu() -> float:
    return time.process_time()


def layers(run) -> dict[str, float]:
    """Each layer alone over the run's calls, CPU seconds."""
    from asgiref.sync import async_to_sync

    from judging.engine.execution import RunSlice, endpoint_for_run, judgment_for
    from judging.models import JudgeRun
    from llm.cache import cache_store
    from llm.stream import CallStream
    from llm.window import AdaptiveWindow

    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING)
    run = JudgeRun.objects.select_related("dataset", "endpoint").get(pk=run.pk)
    endpoint = endpoint_for_run(run)
    work = RunSlice(run, endpoint, f"bench-{os.getpid()}", first_shard_id=None)
    spent: dict[str, float] = {}

    started = cpu()
    requests: list = []
    while more := work.feed():
        requests += more
    spent["prompt"] = cpu() - started

    outcomes: list = [None] * len(requests)
    rows: list = []

    def on_outcome(index, outcome, row):
        outcomes[index] = outcome
        if row is not None:
            rows.append(row)

    async def send():
        window = AdaptiveWindow(ceiling=IN_FLIGHT, auto=False)
        await CallStream(endpoint, window=window, on_outcome=on_outcome).run(requests)

    started = cpu()
    async_to_sync(send)()
    spent["client"] = cpu() - started
    failed = [outcome for outcome in outcomes if outcome is None or isinstance(outcome, Exception)]
    if failed:
        raise SystemExit(f"{len(failed)} calls failed, e.g. {failed[0]}")

    units = [work.units[index][1] for index in range(len(outcomes))]
    started = cpu()
    for unit, outcome in zip(units, outcomes):
        judgment_for(run, unit, outcome, max_tokens=work.max_tokens, signature=work.signature)
    spent["parse"] = cpu() - started

    started = cpu()
    for start in range(0, len(outcomes), BATCH):
        cache_store(rows[start : start + BATCH])
        work.save([(index, outcomes[index]) for index in range(start, min(start + BATCH, len(outcomes)))])
    spent["store"] = cpu() - started - spent["parse"]
    if run.judgments.count() != len(outcomes):
        raise SystemExit(f"stored {run.judgments.count()} judgments of {len(outcomes)}")
    return spent


def whole(run) -> tuple[float, float]:
    """The worker's whole path over a fresh run: (CPU seconds, wall seconds)."""
    from judging.engine.execution import run_execute_inline

    wall, started = time.perf_counter(), cpu()
    status = run_execute_inline(run=run)
    used, wall = cpu() - started, time.perf_counter() - wall
    if status != "done" or run.judgments.count() != run.total:
        errors = list(run.judgments.exclude(call_error="").values_list("call_error", flat=True)[:3])
        raise SystemExit(
            f"the run ended {status} with {run.judgments.count()} of {run.total} judgments; "
            f"{run.judgments.exclude(call_error='').count()} calls failed, e.g. {errors}"
        )
    return used, wall


def child(root: Path, base_url: str, calls: int) -> dict:
    """Runs in a process of its own, with `root`'s code and a fresh SQLite database."""
    sys.path.insert(0, str(root))
    folder = tempfile.mkdtemp(prefix="userbench-cpu-")
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=f"sqlite:///{folder}/bench.sqlite3",
        # As deployed: with DEBUG on, Django keeps the text of every query, which costs CPU.
        DEBUG="0",
        SECRET_KEY=f"bench-only-{uuid.uuid4().hex}",
        LOG_LEVEL="WARNING",
        # The loopback server is an internal address (llm/egress.py).
        LLM_ALLOWED_INTERNAL_HOSTS="127.0.0.0/8,::1,localhost",
    )
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from judging.models import CandidateModel
    from llm.models import Endpoint

    endpoint = Endpoint.objects.create(name="bench", base_url=base_url, timeout_seconds=60, max_retries=0)
    model = CandidateModel.objects.create(name="bench-model")
    whole(make_run(100, endpoint, model))  # warm: imports, connections, the first queries
    spent = layers(make_run(calls, endpoint, model))
    spent["whole"], wall = whole(make_run(calls, endpoint, model))
    return {"per_call_ms": {name: seconds / calls * 1000 for name, seconds in spent.items()}, "wall": wall}


def export(rev: str) -> Path | None:
    """The tree of commit `rev` in a temporary folder, or None when this repository lacks it."""
    folder = Path(tempfile.mkdtemp(prefix="userbench-before-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True)
    if archive.returncode != 0:
        print(f"cannot export {rev}: {archive.stderr.decode().strip()}; measuring this tree only", file=sys.stderr)
        return None
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def measure(root: Path, base_url: str, calls: int) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", str(root), "--base-url", base_url]
    done = subprocess.run(command + ["--calls", str(calls)], cwd=root, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the measurement in {root} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def span(values: list[float]) -> str:
    """The median of the rounds, and their range."""
    middle = statistics.median(values)
    return f"{middle:5.2f}" if len(values) == 1 else f"{middle:5.2f} ({min(values):.2f} to {max(values):.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3, help="each tree this many times, in turns")
    parser.add_argument("--before", default=BEFORE, help="the commit to compare with ('' for this tree only)")
    parser.add_argument("--server-processes", type=int, default=2)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(Path(args.child), args.base_url, args.calls)))
        return 0
    trees = {"after": ROOT}
    before = export(args.before) if args.before else None
    if before is not None:
        trees = {"before": before, **trees}
    server, base_url = start_server(args.server_processes)
    results: dict[str, list[dict]] = {name: [] for name in trees}
    try:
        for round_number in range(args.rounds):
            for name, root in trees.items():
                print(f"  round {round_number + 1}, {name}...", file=sys.stderr, flush=True)
                results[name].append(measure(root, base_url, args.calls))
    finally:
        server.terminate()
        server.wait()
    print(f"CPU per call, ms: {args.calls} calls, {IN_FLIGHT} in flight, a loopback server answering at once")
    rounds = f"median of {args.rounds} rounds (their range)"
    print(f"{rounds}; before = {args.before}" if before else rounds)
    header = f"{'layer':18}" + "".join(f"{name:>22}" for name in trees)
    print(header + ("   after/before" if before else ""))
    for layer in (*LAYERS, "loop and hand-offs", "whole"):
        values = {}
        for name in trees:
            per_call = [run["per_call_ms"] for run in results[name]]
            if layer == "loop and hand-offs":
                values[name] = [ms["whole"] - sum(ms[part] for part in LAYERS) for ms in per_call]
            else:
                values[name] = [ms[layer] for ms in per_call]
        line = f"{layer:18}" + "".join(f"{span(values[name]):>22}" for name in trees)
        if before and layer != "loop and hand-offs":
            line += f"   {statistics.median(values['after']) / statistics.median(values['before']):.2f}x"
        print(line)
    print("loop and hand-offs: the whole path less the four layers measured alone (noise can make it negative)")
    for name in trees:
        middle = statistics.median(run["per_call_ms"]["whole"] for run in results[name])
        walls = ", ".join(f"{run['wall']:.1f}" for run in results[name])
        print(f"{name}: the whole path at {1000 / middle:.0f} calls per CPU-second; its wall times {walls} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
