"""A judge run at a provider's limits, with 2 and 4 `db_worker` processes sharing them.

A loopback server (tests/judging/fake_llm.py with tests/judging/rate_limits.py) enforces
requests and tokens per "minute" with 429s, as OpenAI does, and counts the calls it serves at
once. The endpoint states the same limits, so the workers keep to them through the budget in
the database (llm/budget.py). For each number of workers it prints:

  - the share of calls answered 429 (target: under 1 %);
  - the peak of calls in flight at the server (never above the endpoint's limit);
  - the wall time, from the first call's arrival to the last reply, against the time the
    limits allow: full windows of what the minute allows, the last one taking as long as
    its calls take at the in-flight limit (target: within 1.15x);
  - the transactions the workers ran on the shared budgets' rows per call, and the grants they
    dropped unsent, too late for the pacing (from their logs: llm/gate.py says both);
  - the CPU the workers used, in all and per second of the run: a worker waiting at a limit
    should wait, not spin (target: a small share of one core per worker).

The "minute" is --window seconds (60 is a provider's; shorter keeps the benchmark short: the
workers read it from LLM_RATE_WINDOW_SECONDS). With --provider-window W the provider counts
its limits over every W seconds instead (its share of the minute's: RPM 1,200 is 40 requests
per 2 s), as providers that quantise their limits do; the time the limits allow is then W's
windows. With --busy N, N busy loops run beside it at normal priority (one per core: a busy
machine). SQLite in a temporary file unless DATABASE_URL is given (a PostgreSQL database the
benchmark may fill).

    .venv/bin/python bench/bench_limits.py [--calls 200] [--window 5] [--rpm 40] [--tpm 40000]
        [--in-flight 8] [--latency 0.2] [--workers 2,4] [--provider-window 2] [--busy 2]

As SPEC's "provider limits" are measured (600 calls, RPM 1,200 then TPM 480,000, counted over
2-second windows):

    .venv/bin/python bench/bench_limits.py --calls 600 --window 60 --provider-window 2 \
        --rpm 1200 --tpm 100000000 --in-flight 16 --max-tokens 64
    .venv/bin/python bench/bench_limits.py --calls 600 --window 60 --provider-window 2 \
        --rpm 100000 --tpm 480000 --in-flight 64 --max-tokens 1000
"""

from __future__ import annotations

import argparse
import math
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def start_worker(name: str, env: dict) -> tuple[subprocess.Popen, str]:
    log = tempfile.NamedTemporaryFile(prefix=f"bench-limits-{name}-", suffix=".log", delete=False)
    command = [PY, "manage.py", "db_worker", "--queue-name", "judging", "--interval", "0.05"]
    command += ["--no-startup-delay", "--no-reload", "--worker-id", name]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT), log.name


def budget_counts(logs: list[str]) -> tuple[int, int]:
    """Transactions on the shared budgets' rows and grants dropped too late, from the workers'
    logs (llm/gate.py says both as a stream ends)."""
    transactions = dropped = 0
    for path in logs:
        for line in Path(path).read_text(errors="replace").splitlines():
            found = re.search(r"shared budgets: (\d+) transactions, (\d+) grants dropped", line)
            if found:
                transactions += int(found.group(1))
                dropped += int(found.group(2))
    return transactions, dropped


def allowed_seconds(calls: int, per_window: int, window: float, in_flight: int, latency: float) -> float:
    """The shortest time the limits allow: full windows, then the last window's calls at the
    in-flight limit (each window's calls take less than the window at that limit)."""
    windows = math.ceil(calls / per_window)
    last = calls - (windows - 1) * per_window
    return (windows - 1) * window + math.ceil(last / in_flight) * latency


def one(args, workers: int) -> dict:
    # Imported here, not at the top: Django is set up by main() first.
    from curation.models import Dataset, Item
    from judging.dispatch import run_enqueue
    from judging.models import Answer, CandidateModel, JudgeRun
    from judging.runs.creation import run_create
    from judging.runs.spec import RunSpec
    from llm.models import Endpoint
    from tests.judging.fake_llm import FakeLLM, default_reply
    from tests.judging.rate_limits import ProviderLimits, provider_tokens

    served: list[float] = []
    lock = threading.Lock()

    def timed_reply(body):
        with lock:
            served.append(time.monotonic())
        return default_reply(body)

    server = FakeLLM(latency=args.latency, reply=timed_reply).start()
    counted = args.provider_window or args.window
    limits = ProviderLimits(
        rpm=int(args.rpm * counted / args.window), tpm=int(args.tpm * counted / args.window), window=counted
    )
    server.limits = limits
    tag = f"w{workers}-{time.time_ns()}"
    endpoint = Endpoint.objects.create(
        name=tag,
        base_url=server.base_url,
        max_in_flight=args.in_flight,
        requests_per_minute=args.rpm,
        tokens_per_minute=args.tpm,
        max_retries=6,
    )
    dataset = Dataset.objects.create(name=tag)
    model = CandidateModel.objects.create(name=tag)
    items = Item.objects.bulk_create(
        [
            Item(dataset=dataset, external_id=f"q{n}", question=f"question {n}", reference=f"reference {n}")
            for n in range(args.calls)
        ]
    )
    Answer.objects.bulk_create([Answer(item=item, model=model, text=f"answer {n}") for n, item in enumerate(items)])
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="judge",
            candidates=(model,),
            endpoint=endpoint,
            concurrency=args.in_flight,
            shard_size=10,
            max_tokens=args.max_tokens,
        )
    )
    env = {
        **os.environ,
        "LLM_RATE_WINDOW_SECONDS": str(args.window),
        # INFO: a stream's count of budget transactions is read from the logs.
        "LOG_LEVEL": "INFO",
    }
    # The workers' CPU: what this process's reaped children used, before and after.
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_before = children.ru_utime + children.ru_stime
    started = time.monotonic()
    started_workers = [start_worker(f"{tag}-{n}", env) for n in range(workers)]
    processes = [process for process, _log in started_workers]
    try:
        time.sleep(3)  # the workers start (import Django and the SDK) before the run is queued
        run_enqueue(run=run)
        deadline = time.monotonic() + 3600
        while JudgeRun.objects.values_list("status", flat=True).get(pk=run.pk) == JudgeRun.Status.RUNNING:
            if time.monotonic() > deadline:
                raise SystemExit("the run did not finish within an hour")
            time.sleep(0.2)
    finally:
        for process in processes:
            process.terminate()
        # A worker that does not stop within a minute of SIGTERM is a finding, not a crash of the
        # benchmark: it is counted, then killed.
        slow_to_stop = 0
        for process in processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                slow_to_stop += 1
                process.kill()
                process.wait()
        server.stop()
    lifetime = time.monotonic() - started
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    worker_cpu = children.ru_utime + children.ru_stime - cpu_before
    run.refresh_from_db()
    transactions, dropped = budget_counts([log for _process, log in started_workers])
    # The calls' tokens as the server counted them: what the minute's tokens allow per window.
    tokens_per_call = sum(provider_tokens(body) for body in server.requests) / max(1, server.count)
    assert limits.rpm is not None and limits.tpm is not None  # the bench states both
    per_window = min(limits.rpm, int(limits.tpm // tokens_per_call))
    wall = served[-1] - (served[0] - args.latency)
    allowed = allowed_seconds(args.calls, per_window, counted, args.in_flight, args.latency)
    return {
        "workers": workers,
        "status": run.status,
        "requests": server.count,
        "429_share": limits.refused / max(1, server.count),
        "peak_in_flight": server.peak_busy,
        "wall_s": wall,
        "allowed_s": allowed,
        "ratio": wall / allowed,
        "worker_cpu_s": worker_cpu,
        # Cores the workers kept busy over their lifetime (start-up included), per worker.
        "cores_per_worker": worker_cpu / lifetime / workers,
        "slow_to_stop": slow_to_stop,
        "transactions_per_call": transactions / max(1, server.count),
        "dropped": dropped,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--window", type=float, default=5.0, help="the provider's minute, in seconds")
    parser.add_argument("--rpm", type=int, default=40)
    parser.add_argument("--tpm", type=int, default=40_000)
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--workers", default="2,4")
    parser.add_argument("--provider-window", type=float, help="the provider counts its limits over these seconds")
    parser.add_argument("--busy", type=int, default=0, help="busy loops beside the run (one per core: a busy machine)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from bench._django import setup_django

    setup_django()
    print(
        f"{args.calls} calls; limits per {args.window:g} s: {args.rpm} requests, {args.tpm} tokens; "
        f"{args.in_flight} in flight; latency {args.latency:g} s; database {os.environ['DATABASE_URL'].split(':')[0]}; "
        f"provider counts over {args.provider_window or args.window:g} s; {args.busy} busy loop(s), load average "
        f"{os.getloadavg()[0]:.1f}"
    )
    print(
        f"{'workers':>7} {'status':>9} {'requests':>8} {'429 %':>6} {'peak':>5} {'wall s':>7} {'allowed s':>9} "
        f"{'ratio':>6} {'worker CPU s':>12} {'cores/worker':>12} {'budget tx/call':>14} {'dropped':>7}"
    )
    busy = [subprocess.Popen([PY, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        for part in args.workers.split(","):
            row = one(args, int(part))
            print(
                f"{row['workers']:>7} {row['status']:>9} {row['requests']:>8} {100 * row['429_share']:>6.2f} "
                f"{row['peak_in_flight']:>5} {row['wall_s']:>7.1f} {row['allowed_s']:>9.1f} {row['ratio']:>6.2f} "
                f"{row['worker_cpu_s']:>12.1f} {row['cores_per_worker']:>12.2f} "
                f"{row['transactions_per_call']:>14.2f} {row['dropped']:>7}  load {os.getloadavg()[0]:.1f}"
                + (f", {row['slow_to_stop']} worker(s) killed a minute after SIGTERM" if row["slow_to_stop"] else ""),
                flush=True,
            )
    finally:
        for process in busy:
            process.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
