"""A worker cut off from PostgreSQL mid-run, as on a host of its own: what the provider is paid.

Two `db_worker` processes judge a run at the issue's scale (1,200 calls, 64 in flight shared by
the two, 1 s a call) against a loopback provider; one of them runs in a network namespace of its
own (tests/nethosts.py: its own addresses, its database reached over a veth link). Once both hold
shards and have calls out, that link goes down: packets dropped, no reset, as in a partition.
The other worker takes the cut-off one's shards over once their heartbeat is stale, and the run
finishes. Then the link comes back. It prints, counted at the provider:

  - the calls paid, against the bound: every call once, plus at most the cut-off worker's calls
    in flight and one window more (1,200 calls at 64 in flight: at most 1,264);
  - the calls the cut-off worker sent after the cut, against twice its window;
  - the judgments stored (each unit once: nothing lost, nothing doubled) and the calls sent
    after the run finished (none, before and after the link came back);
  - the wall time from the cut to the run's end, against the stale-heartbeat time.

PostgreSQL only (DATABASE_URL; the benchmark fills that database), as root with iproute2.

    DATABASE_URL=postgres://... .venv/bin/python bench/bench_partition.py [--calls 1200] \
        [--in-flight 64] [--latency 1.0] [--busy 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1200, help="calls in the run (two candidates: half as many items)")
    parser.add_argument("--in-flight", type=int, default=64, help="the run's calls in flight, shared by both workers")
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--busy", type=int, default=0, help="busy loops beside the run (one per core: a busy machine)")
    args = parser.parse_args(argv)
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        raise SystemExit("DATABASE_URL must name a PostgreSQL database: the partition is of its socket")
    if os.geteuid() != 0:
        raise SystemExit("network namespaces need root and iproute2")
    sys.path.insert(0, str(ROOT))
    from tests.nethosts import DB_LINK, HTTP_LINK, PARTITION_SETTINGS

    os.environ["LLM_ALLOWED_INTERNAL_HOSTS"] = PARTITION_SETTINGS["LLM_ALLOWED_INTERNAL_HOSTS"]
    from bench._django import setup_django

    setup_django()
    from django.db import connection

    from judging.dispatch import run_enqueue
    from judging.models import JudgeRun, RunWorker
    from llm.models import Endpoint
    from tests.factories import two_model_judge_run
    from tests.judging.fake_llm import FakeLLM
    from tests.nethosts import Forwarder, NetHost
    from tests.processes import start_worker, stop, wait_for

    settings = {**PARTITION_SETTINGS, "LOG_LEVEL": "WARNING"}
    stale = int(PARTITION_SETTINGS["JUDGING_STALE_SECONDS"])
    busy = [subprocess.Popen([PY, "-c", "while True: pass"]) for _ in range(args.busy)]
    host = NetHost()
    provider = FakeLLM(latency=args.latency, host=HTTP_LINK[0]).start()
    forwarder = Forwarder(int(connection.settings_dict["PORT"] or 5432))
    db = connection.settings_dict
    near_database = os.environ["DATABASE_URL"]
    far_database = f"postgres://{db['USER']}@{DB_LINK[0]}:{forwarder.port}/{db['NAME']}"
    tag = f"partition-{time.time_ns()}"
    endpoint = Endpoint.objects.create(name=tag, base_url=provider.base_url, max_in_flight=args.in_flight)
    run = two_model_judge_run(
        endpoint, dataset_name=tag, items=args.calls // 2, shard_size=10, concurrency=args.in_flight
    )
    total = 2 * (args.calls // 2)
    near = start_worker(near_database, "near", **settings)
    far = start_worker(far_database, "far", namespace=host.namespace, **settings)
    workers = [near, far]
    far_marker = f":{far.pid}:"

    def status() -> str:
        return JudgeRun.objects.values_list("status", flat=True).get(pk=run.pk)

    def holders() -> set[str]:
        return set(run.shards.filter(status="running").values_list("worker_id", flat=True))

    try:
        time.sleep(3)  # both workers start (Django, the SDK) before the run is queued
        run_enqueue(run=run)
        wait_for(
            lambda: any(far_marker in holder for holder in holders()) and len(holders()) == 2,
            processes=workers,
            what="both workers to hold shards",
        )
        wait_for(
            lambda: (
                set(provider.senders[-args.in_flight :]) == {HTTP_LINK[0], HTTP_LINK[1]}
                and run.judgments.count() >= args.in_flight
            ),
            processes=workers,
            what="both workers to have calls out",
        )
        far_row = RunWorker.objects.filter(run=run, worker_id__contains=far_marker).get()
        far_window = max(far_row.ceiling, far_row.window)
        host.cut_database(True)
        cut_at, cut_time = provider.count, time.monotonic()
        judged_at_cut = run.judgments.count()
        wait_for(lambda: status() == JudgeRun.Status.FINISHED, processes=[near], timeout=3600, what="the run")
        finished_after = time.monotonic() - cut_time
        paid = provider.count
        far_after_cut = provider.senders[cut_at:].count(HTTP_LINK[1])
        host.cut_database(False)
        time.sleep(2 * stale)  # the far worker hears its database again and records its task
        paid_after_heal = provider.count
        units = list(run.judgments.values_list("item_id", "model_id"))
        far_alive = far.poll() is None
    finally:
        for worker in workers:
            stop(worker)
        forwarder.close()
        provider.stop()
        host.close()
        for process in busy:
            process.kill()

    bound = total + args.in_flight
    print(
        f"{total} calls, {args.in_flight} in flight shared by 2 workers, {args.latency:g} s a call; "
        f"{args.busy} busy loop(s); load average {os.getloadavg()[0]:.1f}"
    )
    print(f"  judged before the cut          : {judged_at_cut}")
    print(f"  paid at the provider           : {paid} (bound {bound}: every call once + one worker's share)")
    print(
        f"  the cut-off worker after the cut: {far_after_cut} calls (its window {far_window}; bound {2 * far_window})"
    )
    print(f"  judgments stored               : {len(units)}, distinct units {len(set(units))} of {total}")
    print(f"  sent after the run finished    : {paid_after_heal - paid} (link back included)")
    print(f"  the run finished               : {finished_after:.1f} s after the cut (stale after {stale} s)")
    print(f"  the cut-off worker outlived it : {'yes' if far_alive else 'NO'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
