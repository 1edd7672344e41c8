"""A worker killed with SIGKILL in the middle of a judge run, and the run finished by another
worker with no one resuming it: the scenario test_worker_crash.py runs, in its own process.

Workers are `db_worker` processes, so the database must be one they can open too: the
DATABASE_URL given (a SQLite file, which this script migrates first with --migrate, or the
test suite's PostgreSQL database). The loopback LLM server runs here, so every call is counted
where it arrives. Prints one JSON line:

  {"finished_at_kill": judgments saved when the worker died, "missing_at_kill": units without
   one, "sent_after": calls the server received after the kill, "repeated": units that had a
   judgment at the kill and were sent again, "status", "judgments", "total", "attempts"}

    DATABASE_URL=sqlite:////tmp/x.sqlite3 python -m tests.judging.crash_scenario --migrate
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def start_worker(name: str, env: dict) -> subprocess.Popen:
    # The worker's log goes to a file, not a pipe: a pipe nobody reads fills up and blocks it.
    log = tempfile.NamedTemporaryFile(prefix=f"crash-{name}-", suffix=".log", delete=False)
    process = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "db_worker",
            "--queue-name",
            "judging",
            "--interval",
            "0.05",
            "--no-startup-delay",
            "--no-reload",
            "--worker-id",
            name,
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    process.log_path = log.name
    return process


def wait_for(condition, workers, timeout: float) -> None:
    """Generous bounds: the machine is shared; this is about what happens, not how fast."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.05)
    logs = "\n".join(f"--- {w.log_path}:\n{Path(w.log_path).read_text()[-3000:]}" for w in workers)
    raise SystemExit(f"timed out waiting\n{logs}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--migrate", action="store_true", help="migrate the (fresh) database first")
    parser.add_argument("--workers", type=int, default=2, help="workers at the start; the first is killed")
    parser.add_argument("--items", type=int, default=120)
    parser.add_argument("--shard-size", type=int, default=20)
    parser.add_argument("--stale-seconds", type=float, default=3.0)
    parser.add_argument("--timeout", type=float, default=240.0)
    args = parser.parse_args(argv)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DEBUG"] = "1"
    os.environ["USERBENCH_ENV_FILE"] = ""
    # The workers take these from the environment: a shard with no heartbeat for a few seconds
    # belongs to a dead worker, and the watchdog looks that often.
    os.environ["JUDGING_STALE_SECONDS"] = str(args.stale_seconds)
    os.environ["JUDGING_HEARTBEAT_SECONDS"] = "0.5"
    # The killed worker's share of the endpoint's calls in flight comes back when its lease
    # lapses: in seconds here, as its shards do, rather than the 30 a deployment waits.
    os.environ["LLM_BUDGET_LEASE_SECONDS"] = "2"
    # The fake server is on loopback, an internal address endpoints may reach only where allowed.
    os.environ["LLM_ALLOWED_INTERNAL_HOSTS"] = "127.0.0.0/8,::1,localhost"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    if args.migrate:
        call_command("migrate", verbosity=0)

    from curation.models import Dataset, Item
    from judging.dispatch import run_enqueue
    from judging.models import Answer, CandidateModel, JudgeRun, JudgeShard, Judgment
    from judging.runs.creation import run_create
    from judging.runs.spec import RunSpec
    from llm.models import Endpoint
    from tests.judging.fake_llm import FakeLLM

    server = FakeLLM(latency=0.05).start()
    env = {**os.environ, "FAKE_LLM_KEY": "k"}
    workers = []
    try:
        endpoint = Endpoint.objects.create(name="crash", base_url=server.base_url, max_in_flight=4, max_retries=1)
        dataset = Dataset.objects.create(name="crash")
        model = CandidateModel.objects.create(name="crash-model")
        items = Item.objects.bulk_create(
            [
                Item(dataset=dataset, external_id=f"q{n}", question=f"question {n}", reference=f"reference {n}")
                for n in range(args.items)
            ]
        )
        Answer.objects.bulk_create(
            [Answer(item=item, model=model, text=f"<<unit {item.external_id}>>") for item in items]
        )
        run = run_create(
            spec=RunSpec(
                dataset=dataset,
                mode="pointwise",
                judge_model="judge",
                candidates=[model],
                endpoint=endpoint,
                concurrency=4,
                shard_size=args.shard_size,
            ),
        )
        run_enqueue(run=run)
        workers = [start_worker(f"w{n}", env) for n in range(args.workers)]

        def holder():
            """A worker of ours that holds a running shard.

            The kill must hit a worker in the middle of a shard whatever the machine's load: on a
            busy machine the first worker may start after the other has claimed every shard."""
            holding = JudgeShard.objects.filter(run=run, status=JudgeShard.Status.RUNNING).values_list(
                "worker_id", flat=True
            )
            pids = {worker_id.split(":")[1] for worker_id in holding if worker_id.count(":") >= 2}
            return next((w for w in workers if str(w.pid) in pids), None)

        wait_for(lambda: run.judgments.count() >= args.items // 3, workers, args.timeout)
        # Replies slow down while the victim is chosen and killed, so that the shard it holds
        # cannot finish in between, however busy the machine is.
        server.latency = 2.0
        victim = wait_for(holder, workers, args.timeout)
        workers.remove(victim)
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        # First what had a judgment at the kill, then what the server had received: a unit sent
        # after that count cannot be among the judgments read before it.
        finished = {
            f"<<unit {external_id}>>" for external_id in run.judgments.values_list("item__external_id", flat=True)
        }
        sent_before = server.count
        server.latency = 0.05
        if not workers:
            workers.append(start_worker("restarted", env))  # the machine's worker comes back
        wait_for(
            lambda: JudgeRun.objects.values_list("status", flat=True).get(pk=run.pk) == JudgeRun.Status.FINISHED,
            workers,
            args.timeout,
        )
        after = server.prompts()[sent_before:]
        result = {
            "finished_at_kill": len(finished),
            "missing_at_kill": args.items - len(finished),
            "sent_after": len(after),
            "repeated": sorted(marker for marker in finished if any(marker in prompt for prompt in after)),
            "status": JudgeRun.objects.values_list("status", flat=True).get(pk=run.pk),
            "judgments": Judgment.objects.filter(run=run, call_error="").count(),
            "total": run.total,
            "attempts": sorted(run.shards.values_list("attempts", flat=True)),
        }
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
        server.stop()
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
