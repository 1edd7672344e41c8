"""The judge run of the stress scenario (bench/_annotation_stress.py), as README deploys one: a
loopback OpenAI-protocol server answering every call after a fixed latency
(tests/judging/fake_llm.py --light), the scenario's `db_worker` processes (on every queue,
polling every 50 ms, up throughout as deployed ones are), and `manage.py judge` timed from its
start to its end, as the researcher who typed it feels it. Each judge run is on a dataset of its
own (unique texts: nothing comes from the response cache), made before the crowd starts."""

import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bench._annotation_load_helpers import cpu_seconds
from bench.bench_judge_throughput import PY, ROOT, judge_dataset, start_server, stop

if TYPE_CHECKING:
    from judging.models import CandidateModel

ENDPOINT = "bench-stress-judge"
JUDGED_MODEL = "bench-stress-judged"


class JudgeBeside:
    """The server and the judge runs, on workers started for the scenario; `start` before the
    runs, `close` after."""

    def __init__(self, env: dict, workers: list, *, calls: int, latency: float, concurrency: int):
        self.env, self.workers = env, workers
        self.calls, self.latency, self.concurrency = calls, latency, concurrency
        self.logs = Path(tempfile.mkdtemp(prefix="ub-bench-stress-judge-"))
        self.server: subprocess.Popen | None = None
        self.model: CandidateModel | None = None

    @property
    def ideal(self) -> float:
        """The run's time if every call took exactly the latency and the window stayed full."""
        return self.calls * self.latency / self.concurrency

    def start(self) -> None:
        from judging.models import CandidateModel
        from llm.models import Endpoint

        # Two processes serve the port: one Python process tops out near 300 calls a second.
        self.server, url = start_server(self.latency, 0.0, 2)
        Endpoint.objects.update_or_create(
            name=ENDPOINT, defaults={"base_url": url, "max_in_flight": None, "timeout_seconds": 60, "max_retries": 2}
        )
        self.model, _ = CandidateModel.objects.get_or_create(name=JUDGED_MODEL)

    def close(self) -> None:
        if self.server is not None:
            stop([self.server])

    def dataset(self) -> str:
        """A fresh dataset of `calls` items, each answered by the judged model; its name."""
        return judge_dataset(self.calls, self.model).name

    def server_cpu(self) -> float:
        """CPU seconds so far of the LLM server (its serving processes included)."""
        return cpu_seconds(self.server.pid) if self.server else 0.0

    def launch(self, dataset: str, at: float | None = None) -> "JudgeRun":
        """`manage.py judge` on the dataset, from `at` (wall clock; now if None), in a thread."""
        return JudgeRun(self, dataset, at)


class JudgeRun(threading.Thread):
    """One `manage.py judge` run of the dataset, timed, in a thread; `outcome()` waits for it."""

    def __init__(self, judge: JudgeBeside, dataset: str, at: float | None):
        super().__init__(daemon=True)
        self.judge, self.dataset, self.at = judge, dataset, at
        self.began = self.ended = 0.0  # wall clock
        self.command_cpu = 0.0
        self.output = ""
        self.returncode: int | None = None
        self.start()

    def run(self) -> None:
        judge = self.judge
        if self.at is not None:
            time.sleep(max(0.0, self.at - time.time()))
        log = judge.logs / f"judge-{self.dataset}.out"
        command = [PY, "manage.py", "judge", "--dataset", self.dataset, "--mode", "pointwise"]
        command += ["--judge-model", "bench-judge", "--models", JUDGED_MODEL, "--endpoint", ENDPOINT]
        command += ["--concurrency", str(judge.concurrency)]
        # Far beyond any run that is merely slow: a run that never ends (a worker gone) is reported.
        deadline = time.monotonic() + 120 + 20 * judge.ideal
        self.began = time.time()
        with log.open("w") as sink:
            process = subprocess.Popen(command, cwd=ROOT, env=judge.env, stdout=sink, stderr=subprocess.STDOUT)
            while process.poll() is None:
                # Read while it lives: once it has exited, /proc no longer has its CPU time.
                self.command_cpu = max(self.command_cpu, cpu_seconds(process.pid))
                if time.monotonic() > deadline or any(worker.poll() is not None for worker in judge.workers):
                    process.kill()
                time.sleep(0.05)
        self.ended = time.time()
        self.returncode = process.returncode
        self.output = log.read_text(errors="replace")

    def outcome(self) -> dict:
        """How the run went: its time, and its calls judged as the database has them."""
        import re

        from judging.models import JudgeRun as Run

        self.join()
        # The run's line, whatever the command said before it (the workspace, once there are several).
        printed = re.search(r"^Run (\d+):", self.output, re.MULTILINE)
        run = Run.objects.filter(pk=int(printed.group(1))).first() if printed else None
        judged = run.judgments.scored().count() if run else 0
        stored = run.judgments.count() if run else 0
        status = run.status if run else "not made"
        # Exactly its calls: every one judged, none twice (stored counts every judgment row).
        ok = self.returncode == 0 and status == Run.Status.FINISHED and judged == stored == self.judge.calls
        # From the run's row to its end: the run without the command's start-up (Django's import).
        made = (run.finished_at - run.created_at).total_seconds() if run and run.finished_at else float("nan")
        return {
            "seconds": self.ended - self.began,
            "made_to_finished": made,
            "began": self.began,
            "ended": self.ended,
            "judged": judged,
            "stored": stored,
            "calls": self.judge.calls,
            "status": status,
            "ok": ok,
            "command_cpu": self.command_cpu,
            "tail": "" if ok else self.output[-1500:],
        }
