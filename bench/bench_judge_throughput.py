"""Judge throughput as a researcher feels it: `manage.py judge` timed from its start to its end.

For each database (SQLite in a temporary file; PostgreSQL when one is given) it runs, side by
side in one process tree, through the real path (the `judge` command, run and shards,
`db_worker` processes polling every 50 ms, the openai client, the response cache, the
judgment writes and the command's own progress polling):

  - baseline: 1 call in flight (what the papers' scripts do), a sample of --baseline-calls,
    per call, scaled to --calls;
  - fixed: --calls calls, 64 in flight, one worker, a loopback server answering after
    --latency (target: within 1.15x of calls x latency / 64);
  - lognormal: the same with lognormal latencies (median --latency, sigma 1: p99 about 10x
    the median; target: within 1.2x of the sum of the latencies / 64, the sum computed from the
    very prompts the run sends);
  - two workers: 128 in flight across two workers (target on PostgreSQL: within 1.25x of
    calls x latency / 128);
  - two workers, lognormal: the long-tailed run at 128 in flight across two workers (target on
    PostgreSQL: within 1.25x of the sum of the latencies / 128).

With --busy N, N busy loops (`while True: pass`, normal priority) run beside everything, one
per core being the busy machine of SPEC's targets. With --profile DIR each worker runs under
cProfile and writes DIR/<case>-worker-<n>.prof (read with `python -m pstats`).

With --scale it also runs 10,000- and 100,000-judgment runs at 1, 2 and 4 workers (64 in
flight each) and reads each worker's peak memory (VmHWM): a worker's memory must not grow
with the size of the run.

The loopback servers run in processes of their own (--server-processes per server), off the
critical path. Nothing here asserts: it prints ratios.

    .venv/bin/python bench/bench_judge_throughput.py [--calls 3692] [--latency 0.2]
        [--baseline-calls 50] [--databases sqlite,postgres] [--postgres-url URL] [--scale]
        [--cases baseline,fixed,lognormal,two_workers,two_workers_lognormal] [--busy 2] [--profile DIR]
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
TARGETS = {"fixed": 1.15, "lognormal": 1.2, "two_workers": 1.25, "two_workers_lognormal": 1.25}


def list_schedule_end(latencies: list[float], slots: int) -> float:
    """When calls of these latencies, sent in this order, each as soon as one of `slots` is free,
    with no cost of their own, would all be back: the best any client sending in the run's order
    can do. Above sum / slots by the tail: calls sent last that run long."""
    free = [0.0] * slots
    for latency in latencies:
        heapq.heappush(free, heapq.heappop(free) + latency)
    return max(free)


def start_server(latency: float, sigma: float, processes: int) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen(
        [
            PY,
            "-m",
            "tests.judging.fake_llm",
            "--light",
            "--latency",
            str(latency),
            "--sigma",
            str(sigma),
            "--processes",
            str(processes),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None  # a pipe, as asked
    return server, server.stdout.readline().strip()


class Worker(subprocess.Popen):
    """A worker process and the file its output goes to."""

    log: Path


def start_busy_loops(count: int) -> list[subprocess.Popen]:
    """Processes that each keep a core busy at normal priority, as other work on the machine would."""
    return [subprocess.Popen([PY, "-c", "while True: pass"]) for _ in range(count)]


def start_workers(
    count: int, env: dict, logs: Path, profile: str | None = None, queue: str = "judging"
) -> list[Worker]:
    """Workers as deployed, polling every 50 ms; returned once each says it is polling. With a
    `profile` path prefix, each runs under cProfile and writes <prefix>-worker-<n>.prof on exit.
    `queue`: the queue they take tasks from ('*': every queue, as README's deployment runs them)."""
    workers = []
    for n in range(count):
        log = logs / f"worker-{n}-{uuid.uuid4().hex[:6]}.log"
        profiler = ["-m", "cProfile", "-o", f"{profile}-worker-{n}.prof"] if profile else []
        process = Worker(
            [
                PY,
                *profiler,
                "manage.py",
                "db_worker",
                "--queue-name",
                queue,
                "--interval",
                "0.05",
                "--no-startup-delay",
                "--no-reload",
                "--worker-id",
                f"bench-{n}-{uuid.uuid4().hex[:6]}",
            ],
            cwd=ROOT,
            env=env,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
        )
        process.log = log
        workers.append(process)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not all("Starting worker" in w.log.read_text() for w in workers):
        time.sleep(0.05)
    return workers


def judge_dataset(calls: int, model):
    """A dataset of `calls` items, each answered by `model`, with texts unique to it: nothing a
    run judges on it may come from the response cache."""
    from curation.models import Dataset, Item
    from judging.models import Answer

    nonce = uuid.uuid4().hex[:10]
    dataset = Dataset.objects.create(name=f"bench-{nonce}")
    for start in range(0, calls, 5000):
        items = Item.objects.bulk_create(
            [
                Item(dataset=dataset, external_id=str(n), question=f"q {nonce} {n}", reference="r", intent="factual_qa")
                for n in range(start, min(calls, start + 5000))
            ]
        )
        Answer.objects.bulk_create(
            [Answer(item=item, model=model, text=f"a {nonce} {item.external_id}") for item in items]
        )
    return dataset


def peak_memory_mib(process: subprocess.Popen) -> float | None:
    try:
        status = Path(f"/proc/{process.pid}/status").read_text()
    except OSError:
        return None
    match = re.search(r"VmHWM:\s+(\d+) kB", status)
    return int(match.group(1)) / 1024 if match else None


def stop(processes: Sequence[subprocess.Popen]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def child(args) -> dict:
    """Runs in a process whose DATABASE_URL is set: Django is configured once per database."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    # The fake servers benchmarks call are on loopback, an internal address (llm/egress.py).
    os.environ.setdefault("LLM_ALLOWED_INTERNAL_HOSTS", "127.0.0.0/8,::1,localhost")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone
    from django_tasks_db.models import DBTaskResult

    call_command("migrate", verbosity=0)
    from curation.models import Dataset
    from judging.engine.execution import shard_plan
    from judging.models import CandidateModel, JudgeRun
    from judging.results.selectors import run_progress
    from judging.runs.creation import run_create
    from judging.runs.spec import RunSpec
    from llm.models import Endpoint
    from tests.judging.fake_llm import lognormal_latency

    logs = Path(tempfile.mkdtemp(prefix="bench-judge-"))
    fixed_server, fixed_url = start_server(args.latency, 0.0, args.server_processes)
    lognormal_server, lognormal_url = start_server(args.latency, 1.0, args.server_processes)
    for name, url in (("bench-fixed", fixed_url), ("bench-lognormal", lognormal_url)):
        Endpoint.objects.update_or_create(
            name=name, defaults={"base_url": url, "max_in_flight": None, "timeout_seconds": 60, "max_retries": 2}
        )
    model, _ = CandidateModel.objects.get_or_create(name="bench-model")
    # Workers and the command run as deployed: DEBUG off (with DEBUG on, Django keeps the text
    # of the last 9,000 queries, which a benchmark of bulk inserts would measure instead).
    env = {**os.environ, "DEBUG": "0", "SECRET_KEY": f"bench-only-{uuid.uuid4().hex}"}
    # A deployment's code has its bytecode cached: a shell that forbids writing it (some
    # containers set PYTHONDONTWRITEBYTECODE) would time recompiling the app at every start.
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    def planned_latencies(dataset: Dataset) -> list[float]:
        """The latencies the lognormal server will use, in the order the run plans its calls:
        from the very prompts the run will send."""
        probe = run_create(
            spec=RunSpec(
                dataset=dataset, mode="pointwise", judge_model="bench-judge", candidates=(model,), concurrency=1
            )
        )
        latencies = [
            lognormal_latency(unit.prompt, args.latency, 1.0)
            for shard in probe.shards.order_by("index")
            for unit in shard_plan(shard)
        ]
        probe.delete()
        return latencies

    def timed(
        label: str,
        *,
        calls: int,
        workers: int,
        concurrency: int,
        endpoint: str = "bench-fixed",
        ideal: float | None = None,
    ) -> dict:
        dataset = judge_dataset(calls, model)
        in_order = None
        if endpoint == "bench-lognormal":
            latencies = planned_latencies(dataset)
            ideal = sum(latencies) / concurrency
            in_order = list_schedule_end(latencies, concurrency)
        elif ideal is None:
            ideal = calls * args.latency / concurrency
        print(
            f"  [{connection.vendor}] {label}: {calls} calls, {concurrency} in flight, {workers} worker(s)...",
            file=sys.stderr,
            flush=True,
        )
        profile = None
        if args.profile:
            Path(args.profile).mkdir(parents=True, exist_ok=True)
            profile = str(Path(args.profile) / f"{connection.vendor}-{label.replace(' ', '_')}")
        procs = start_workers(workers, env, logs, profile)
        idle_memory = [peak_memory_mib(p) for p in procs]
        try:
            output = logs / f"judge-{uuid.uuid4().hex[:6]}.out"
            started = time.perf_counter()
            command_started = timezone.now()
            with output.open("w") as sink:
                command = subprocess.Popen(
                    [
                        PY,
                        "manage.py",
                        "judge",
                        "--dataset",
                        dataset.name,
                        "--mode",
                        "pointwise",
                        "--judge-model",
                        "bench-judge",
                        "--models",
                        model.name,
                        "--endpoint",
                        endpoint,
                        "--concurrency",
                        str(concurrency),
                        *(["--shard-size", str(args.shard_size)] if args.shard_size else []),
                    ],
                    cwd=ROOT,
                    env=env,
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
            printed_id = None
            while command.poll() is None:
                if printed_id is None and "\n" in output.read_text():
                    printed_id = time.perf_counter() - started
                gone = [p for p in procs if p.poll() is not None]
                if gone:  # a worker killed from outside: the run would wait for a worker forever
                    command.kill()
                    raise SystemExit(
                        f"{label}: a worker exited during the run (code {gone[0].returncode}); see {gone[0].log}"
                    )
                time.sleep(0.01 if printed_id is None else 0.05)
            elapsed = time.perf_counter() - started
            memory = [peak_memory_mib(p) for p in procs]
            out = err = output.read_text()
            first_line = out.splitlines()[0] if out else ""
            printed_id = printed_id or elapsed
            # Untimed: the run's other shard tasks (each ends at once, its shard taken) are left to
            # the workers, as a deployed worker would go through them right after the run; stopped
            # before, they would stand in front of the next case's first shard.
            drained = time.monotonic() + 60
            while DBTaskResult.objects.ready().filter(queue_name="judging").exists() and time.monotonic() < drained:
                time.sleep(0.05)
        finally:
            stop(procs)
        printed = re.match(r"Run (\d+):", first_line)
        if printed is None:
            raise SystemExit(f"{label}: the command did not print its run first:\n{out[-2000:]}")
        run = JudgeRun.objects.get(pk=int(printed.group(1)))
        done = run.judgments.scored().count()
        if command.returncode != 0 or run.status != "finished" or done != calls:
            raise SystemExit(
                f"{label}: run {run.pk} ended {run.status} with {done}/{calls} judgments, exit "
                f"{command.returncode}\n{out[-2000:]}\n{err[-2000:]}"
            )
        first = run.shards.order_by("started_at").values_list("started_at", flat=True).first()
        last = run.judgments.order_by("-created_at").values_list("created_at", flat=True).first()
        # A finished run with every judgment has all three.
        assert first is not None and last is not None and run.finished_at is not None
        # A worker's pick-up: from the first shard task's row (written once the run is committed)
        # to a worker starting it.
        first_task = (
            DBTaskResult.objects.filter(queue_name="judging", enqueued_at__gte=run.created_at)
            .exclude(started_at=None)
            .order_by("started_at")
            .values_list("enqueued_at", "started_at")
            .first()
        )
        pickup = (first_task[1] - first_task[0]).total_seconds() if first_task and first_task[1] else None
        print(
            f"    made {(run.created_at - command_started).total_seconds():.2f} s after the start; first shard "
            f"{(first - run.created_at).total_seconds():.2f} s later; last judgment "
            f"{(last - first).total_seconds():.2f} s later; finished {(run.finished_at - last).total_seconds():.2f} s "
            f"later; the command ended {elapsed - (run.finished_at - command_started).total_seconds():.2f} s later",
            file=sys.stderr,
            flush=True,
        )
        return {
            "label": label,
            "calls": calls,
            "workers": workers,
            "concurrency": concurrency,
            "elapsed": elapsed,
            "ideal": ideal,
            "ratio": elapsed / ideal,
            "in_order": in_order,
            "printed_id_after": printed_id,
            "picked_up_after": (first - run.created_at).total_seconds(),
            "task_pickup": pickup,
            "peak_memory_mib": memory,
            "idle_memory_mib": idle_memory,
            "shards_by_worker": len(set(run.shards.values_list("worker_id", flat=True))),
        }

    def scale() -> list[dict]:
        return [
            timed(f"scale {calls}", calls=calls, workers=workers, concurrency=64 * workers)
            for calls in (10_000, 100_000)
            for workers in (1, 2, 4)
        ]

    results: dict[str, object] = {"database": connection.vendor}
    try:
        if args.scale_only:
            results["scale"] = scale()
            return results
        cases = set(args.cases.split(","))
        if "baseline" in cases:
            baseline = timed("baseline", calls=args.baseline_calls, workers=1, concurrency=1)
            results["baseline_per_call"] = baseline["elapsed"] / args.baseline_calls
        if "fixed" in cases:
            results["fixed"] = timed("fixed", calls=args.calls, workers=1, concurrency=64)
        if "lognormal" in cases:
            results["lognormal"] = timed(
                "lognormal", calls=args.calls, workers=1, concurrency=64, endpoint="bench-lognormal"
            )
        if "two_workers" in cases:
            results["two_workers"] = timed("two workers", calls=args.calls, workers=2, concurrency=128)
        if "two_workers_lognormal" in cases:
            results["two_workers_lognormal"] = timed(
                "two workers lognormal", calls=args.calls, workers=2, concurrency=128, endpoint="bench-lognormal"
            )
        # Progress as `judge` polls it, on the last finished run: queries and time per poll.
        run = JudgeRun.objects.order_by("-pk").first()
        if run is not None:
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                for _ in range(20):
                    run_progress(run=run)
                per_poll = (time.perf_counter() - started) / 20
            results["poll"] = {"queries": len(queries) // 20, "ms": per_poll * 1000}
        if args.scale:
            results["scale"] = scale()
    finally:
        stop([fixed_server, lognormal_server])
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=3692)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--baseline-calls", type=int, default=50)
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument(
        "--server-processes",
        type=int,
        default=2,
        help="processes serving each loopback port (one Python process tops out near 300 calls/s)",
    )
    parser.add_argument("--scale", action="store_true", help="also 10k and 100k judgments at 1, 2 and 4 workers")
    parser.add_argument("--scale-only", action="store_true", help="only the 10k and 100k runs")
    parser.add_argument("--shard-size", type=int, help="judge --shard-size (default: the command's)")
    parser.add_argument(
        "--cases",
        default="baseline,fixed,lognormal,two_workers,two_workers_lognormal",
        help="which of baseline, fixed, lognormal, two_workers, two_workers_lognormal to run",
    )
    parser.add_argument("--busy", type=int, default=0, help="busy loops beside the run (one per core: a busy machine)")
    parser.add_argument("--profile", help="a folder: each worker runs under cProfile and writes its profile there")
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("DATABASE_URL", "") if os.environ.get("DATABASE_URL", "").startswith("postgres") else "",
        help="PostgreSQL database to use (it is migrated and filled); default: DATABASE_URL when it is one",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return 0

    print(
        f"{args.calls} calls, {args.latency * 1000:.0f} ms median latency; `judge` timed from its start to its end; "
        f"{args.busy} busy loop(s) beside it on {os.cpu_count()} cores"
    )
    failed = False
    busy = start_busy_loops(args.busy)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            urls = {"sqlite": f"sqlite:///{tmp}/bench.sqlite3", "postgres": args.postgres_url}
            for name in [n.strip() for n in args.databases.split(",") if n.strip()]:
                if not urls.get(name):
                    print(
                        f"== {name}: skipped (set DATABASE_URL or --postgres-url to a PostgreSQL database you can spare)"
                    )
                    continue
                env = {
                    **os.environ,
                    "DATABASE_URL": urls[name],
                    "DEBUG": "1",
                    "DJANGO_SETTINGS_MODULE": "config.settings",
                }
                command = [
                    PY,
                    __file__,
                    "--child",
                    "--calls",
                    str(args.calls),
                    "--latency",
                    str(args.latency),
                    "--baseline-calls",
                    str(args.baseline_calls),
                    "--server-processes",
                    str(args.server_processes),
                    "--cases",
                    args.cases,
                ]
                command += ["--shard-size", str(args.shard_size)] if args.shard_size else []
                command += ["--profile", str(Path(args.profile).resolve())] if args.profile else []
                if args.scale:
                    command.append("--scale")
                if args.scale_only:
                    command.append("--scale-only")
                load = os.getloadavg()[0]
                done = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
                if done.returncode != 0:
                    print(f"== {name}: failed (see the error above)")
                    failed = True
                    continue
                result = json.loads(done.stdout.strip().splitlines()[-1])
                print(
                    f"== {name} (load average {load:.1f} before, {os.getloadavg()[0]:.1f} after: other processes "
                    "share these cores)"
                )
                if args.scale_only:
                    print_scale(result)
                    continue
                sequential = result.get("baseline_per_call", args.latency) * args.calls
                if "baseline_per_call" in result:
                    print(
                        f"  1 in flight (sample of {args.baseline_calls}, command included): "
                        f"{result['baseline_per_call'] * 1000:.1f} ms/call -> {sequential:.1f} s for {args.calls} calls"
                    )
                for key, label in (
                    ("fixed", "64 in flight, 1 worker, fixed latency"),
                    ("lognormal", "64 in flight, 1 worker, lognormal   "),
                    ("two_workers", "128 in flight, 2 workers, fixed     "),
                    ("two_workers_lognormal", "128 in flight, 2 workers, lognormal "),
                ):
                    if key not in result:
                        continue
                    row = result[key]
                    ok = row["ratio"] <= TARGETS[key]
                    failed |= not ok and (key != "two_workers" or name == "postgres")
                    print(
                        f"  {label}: {row['elapsed']:.2f} s, ideal {row['ideal']:.2f} s = {row['ratio']:.3f}x "
                        f"({'ok' if ok else f'OVER {TARGETS[key]}x'}); {sequential / row['elapsed']:.0f}x faster than "
                        f"1 in flight; run id printed after {row['printed_id_after']:.2f} s, first shard picked up "
                        f"{row['picked_up_after'] * 1000:.0f} ms after the run was made (its task "
                        f"{(row['task_pickup'] or 0) * 1000:.0f} ms after it was queued); workers holding shards: "
                        f"{row['shards_by_worker']}"
                    )
                    if row.get("in_order"):
                        print(
                            f"    sent in the run's order with no cost per call, the calls would end after "
                            f"{row['in_order']:.2f} s = {row['in_order'] / row['ideal']:.3f}x (their tail); "
                            f"the run took {row['elapsed'] / row['in_order']:.3f}x of that"
                        )
                print(f"  progress poll: {result['poll']['queries']} queries, {result['poll']['ms']:.1f} ms")
                print_scale(result)
    finally:
        stop(busy)
    return 1 if failed else 0


def print_scale(result: dict) -> None:
    for row in result.get("scale", []):
        memory = ", ".join(
            f"{idle:.0f} -> {peak:.0f}"
            for idle, peak in zip(row["idle_memory_mib"], row["peak_memory_mib"])
            if idle is not None and peak is not None
        )
        print(
            f"  scale: {row['calls']:>6} calls, {row['workers']} worker(s) at {row['concurrency']} in flight: "
            f"{row['elapsed']:.1f} s, ideal {row['ideal']:.1f} s = {row['ratio']:.3f}x; "
            f"worker memory (started -> peak) {memory} MiB"
        )


if __name__ == "__main__":
    sys.exit(main())
