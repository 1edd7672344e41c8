"""The PII checks on hostile text against ordinary text of the same size, side by side.

For 5k, 10k, 20k and 100k characters: the participant's quick check (`quick_personal_info`, run
when a case is saved) and the reviewer's hints (`pii_hints`, presidio, run by the worker), on

- one long word (`aaaa...`), which made saving a case take seconds,
- `a.` repeated, which kept a worker 44 s per 20,000 characters in presidio's URL pattern,
- `a.com ` repeated (a link every six characters, on one line),
- `1.` repeated (digits and dots: the phone-number matcher's heaviest input),

each against an ordinary English text of the same length. Linear checks show ratios that stay
flat as the size grows; the time per size should grow about as the size does.

Run: .venv/bin/python bench/bench_pii.py [--sizes 5000,10000,20000,100000]
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._django import setup_django  # noqa: E402

setup_django()

from curation.pii.hints import pii_hints, quick_personal_info  # noqa: E402

ORDINARY = "Question: what should I cook tonight? Answer: try a simple pasta with tomatoes and basil. "
HOSTILE = {"one word": "a", "a. x N": "a.", "a.com x N": "a.com ", "1. x N": "1."}


def sized(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def best(check, text: str, repeats: int) -> float:
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        check(text)
        timings.append(time.perf_counter() - start)
    return min(timings)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="5000,10000,20000,100000")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    pii_hints("warm up: a.com and +44 20 7946 0958")
    for name, check in (("quick check", quick_personal_info), ("presidio hints", pii_hints)):
        print(f"== {name}: milliseconds, best of {args.repeats}; ratio to ordinary text of the same size")
        print(f"{'input':<12}" + "".join(f"{size:>22,}" for size in map(int, args.sizes.split(","))))
        sizes = [int(size) for size in args.sizes.split(",")]
        ordinary = {size: best(check, sized(ORDINARY, size), args.repeats) for size in sizes}
        print(f"{'ordinary':<12}" + "".join(f"{ordinary[size] * 1000:>14.1f}        " for size in sizes))
        for label, unit in HOSTILE.items():
            cells = []
            for size in sizes:
                seconds = best(check, sized(unit, size), args.repeats)
                cells.append(f"{seconds * 1000:>14.1f} ({seconds / max(ordinary[size], 1e-6):>5.1f}x)")
            print(f"{label:<12}" + "".join(cells))
        print()


if __name__ == "__main__":
    main()
