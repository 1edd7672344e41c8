"""One progress line for the judging commands: a bar, counts, rate, ETA, tokens and cost."""

from __future__ import annotations

BAR_WIDTH = 30


def progress_line(progress: dict) -> str:
    total = progress["total"] or 1
    filled = int(BAR_WIDTH * progress["done"] / total)
    bar = "#" * filled + "." * (BAR_WIDTH - filled)
    eta = f"{progress['eta_seconds']}s" if progress.get("eta_seconds") is not None else "-"
    cost = f" ~${progress['estimated_cost']:.4f}" if progress.get("estimated_cost") is not None else ""
    return (
        f"[{bar}] {progress['done']}/{progress['total']} done, "
        f"{progress['parse_failures']} unparsed, {progress['call_failures']} failed calls, "
        f"{progress['in_flight']} in flight, {progress['rate_per_second']}/s, ETA {eta}, "
        f"tokens {progress['prompt_tokens']}+{progress['completion_tokens']}{cost}"
    )
