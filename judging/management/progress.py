"""What the judging commands share: the progress line, following a run, running it here."""

from __future__ import annotations

import logging
import os
import sys
import time

from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from core.progress import progress_bar
from judging.engine.batch import run_batch_inline
from judging.engine.execution import run_execute_inline
from judging.engine.queue import run_cancel
from judging.errors import RunError
from judging.models import JudgeRun, JudgeShard
from judging.results.selectors import run_progress

# How often `judge` reads the run's progress: a few small queries on the run's own row, its
# workers' rows and its shards, whatever the number of judgments. Near the end (less than a
# window of judgments left) it reads more often, so the command ends soon after the run.
POLL_SECONDS = 0.25
POLL_SECONDS_NEAR_END = 0.05
# After Ctrl-C, how long to wait for the workers to stop sending (they notice at their next tick).
STOP_WAIT_SECONDS = 10.0


def progress_line(progress: dict) -> str:
    """One line: bar, failures, cut-off replies, window, rate, ETA, tokens and cost, and a
    warning when no worker holds the run."""
    bar = progress_bar(progress["done"], progress["total"])
    eta = f"{progress['eta_seconds']}s" if progress.get("eta_seconds") is not None else "-"
    cost = f" ~${progress['estimated_cost']:.4f}" if progress.get("estimated_cost") is not None else ""
    window = ""
    if progress.get("workers"):
        window = f" (window {progress['window']} of {progress['concurrency']}, {progress['workers']} worker(s))"
    # Slower than a reply a second (a local model on a CPU): seconds a call, not "0.01/s".
    seconds_per_call = progress.get("seconds_per_call")
    rate = (
        f"{seconds_per_call:g} s/call"
        if seconds_per_call is not None and seconds_per_call > 1
        else f"{progress['rate_per_second']}/s"
    )
    # A batch run has no window, rate or ETA: its batches say where it is.
    pace = "" if progress.get("batch") else f"{progress['in_flight']} in flight{window}, {rate}, ETA {eta}, "
    line = (
        f"{bar} done, "
        f"{progress['parse_failures']} unparsed, {progress.get('cut_off', 0)} cut off, "
        f"{progress['call_failures']} failed calls, {pace}"
        f"tokens {progress['prompt_tokens']}+{progress['completion_tokens']}{cost}"
    )
    batches = progress.get("batches")
    if batches:
        line += "; " + batch_summary(batches)
    if progress.get("waiting_for_worker"):
        line += "; no worker holds the run (start one: manage.py db_worker --queue-name judging --interval 0.05)"
    return line


def batch_summary(batches: dict) -> str:
    """A batch run's batches in a few words: how many are at which step, the provider's counts
    and how long they have waited."""
    states: dict[str, int] = {}
    for row in batches["batches"]:
        if row["status"] in ("collected", "settled"):
            continue
        label = row["provider_status"] or row["status"]
        states[label] = states.get(label, 0) + 1
    shown = ", ".join(f"{count} {label.replace('_', ' ')}" for label, count in sorted(states.items())) or "none open"
    return (
        f"batches: {len(batches['batches'])} ({shown}), {batches['completed']}/{batches['requests']} completed, "
        f"{batches['failed']} failed, waiting {batches['waiting_seconds']}s"
    )


def _show(command: BaseCommand, run: JudgeRun, *, end: str = "") -> dict:
    progress = run_progress(run=run)
    command.stdout.write("\r" + progress_line(progress), ending=end)
    command.stdout.flush()
    return progress


def finish(command: BaseCommand, run: JudgeRun) -> None:
    """The run's last line: "Finished" only when every unit has a result and some have a score;
    otherwise a summary and a non-zero exit. A command whose last line this is ends with `leave_now`."""
    run.refresh_from_db()
    scored = run.replied - run.parse_failures - run.cut_off
    if run.status == JudgeRun.Status.FINISHED and (scored > 0 or not run.total):
        command.stdout.write(f"Run {run.pk}: {run.get_status_display()}.{unscored_summary(run)}")
        return
    if run.status == JudgeRun.Status.FINISHED:
        # Every call came back, and none with a score: a table of nothing is no success.
        raise CommandError(f"Run {run.pk}: Finished, but no reply has a score.{unscored_summary(run)}")
    reason = f" {run.error}" if run.error else ""
    raise CommandError(f"Run {run.pk}: {run.get_status_display()}.{reason}{unscored_summary(run)}")


def unscored_summary(run: JudgeRun) -> str:
    """What a run's replies lack, beyond failed calls: a reply cut off at max_tokens or one the
    parser could not read has no score, and the leaderboard leaves it out."""
    parts = []
    if run.cut_off:
        limit, larger = (f" ({run.max_tokens})", str(2 * run.max_tokens)) if run.max_tokens else ("", "N")
        parts.append(
            f"{run.cut_off} of {run.total} replies were cut off at max_tokens{limit} and have no score: "
            f"'judge_resume {run.pk} --max-tokens {larger}' sends them again"
        )
    if run.parse_failures:
        parts.append(f"{run.parse_failures} of {run.total} replies could not be parsed into a score")
    return "".join(f" {part[0].upper()}{part[1:]}." for part in parts)


def leave_now(command: BaseCommand, code: int) -> None:
    """From a terminal, end the process as soon as its last line is out: everything is in the
    database, and tearing down the interpreter's modules would keep the researcher waiting
    for a few hundred milliseconds more. (Called from code, as in tests, it returns.)"""
    if not getattr(command, "_called_from_command_line", False):
        return
    command.stdout.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    logging.shutdown()
    connections.close_all()
    os._exit(code)


def stopped(command: BaseCommand, run: JudgeRun, *, inline: bool) -> None:
    """After Ctrl-C: what was kept, and the command that continues."""
    run.refresh_from_db()
    progress = run_progress(run=run)
    resume = f"manage.py judge_resume {run.pk}" + (" --inline" if inline else "")
    command.stdout.write(
        f"\nStopped: {progress['done']} of {progress['total']} judged; saved judgments are kept and no call "
        f"that came back is sent again. Continue with: {resume}"
    )
    command.stdout.flush()
    raise SystemExit(130)


def follow(command: BaseCommand, run: JudgeRun, *, poll: float = POLL_SECONDS) -> None:
    """Print the run's progress until it stops. Ctrl-C stops the run (the workers stop sending
    at their next tick; what came back is kept), except a batch run's: its batches stay at the
    provider and the workers keep looking at them; only the following stops."""
    try:
        while True:
            progress = _show(command, run)
            if progress["status"] not in (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING):
                break
            near_end = progress["remaining"] <= max(progress["in_flight"], progress["window"], 1)
            time.sleep(min(poll, POLL_SECONDS_NEAR_END) if near_end else poll)
    except KeyboardInterrupt:
        if run.batch:
            stopped_waiting(command, run, inline=False)
        try:
            run_cancel(run=run)
        except RunError:
            pass  # it ended meanwhile: nothing is left to stop
        deadline = time.monotonic() + STOP_WAIT_SECONDS
        while run.shards.filter(status=JudgeShard.Status.RUNNING).exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        stopped(command, run, inline=False)
    command.stdout.write("")
    finish(command, run)


def stopped_waiting(command: BaseCommand, run: JudgeRun, *, inline: bool) -> None:
    """After Ctrl-C while a batch run waits: its batches stay at the provider, and a resume
    picks them up without uploading anything again."""
    run.refresh_from_db()
    progress = run_progress(run=run)
    out = (progress.get("batches") or {}).get("open", 0)
    resume = f"manage.py judge_resume {run.pk}" + (" --inline" if inline else "")
    following = "" if inline else " The workers keep looking at them."
    command.stdout.write(
        f"\nStopped waiting: {progress['done']} of {progress['total']} judged; {out} batch(es) stay at the "
        f"provider and are never uploaded again.{following} Continue with: {resume}"
    )
    command.stdout.flush()
    raise SystemExit(130)


def run_here(command: BaseCommand, run: JudgeRun) -> None:
    """Execute the run's queued shards in this process, printing progress as judgments are saved.
    Ctrl-C stops the calls at once: the run is cancelled, what came back is kept. A batch run
    sends its batches and waits for them here; Ctrl-C stops the waiting, not the batches."""
    last = [0.0]

    def show():
        if time.monotonic() - last[0] >= 0.5:
            last[0] = time.monotonic()
            _show(command, run)

    if run.batch:
        if run_batch_inline(run=run, on_progress=show) == "interrupted":
            stopped_waiting(command, run, inline=True)
        _show(command, run, end="\n")
        finish(command, run)
        return
    outcome = run_execute_inline(run=run, on_progress=show)
    if outcome == "interrupted":
        stopped(command, run, inline=True)
    _show(command, run, end="\n")
    finish(command, run)
