"""Judge-reply parsing time against reply size: it must grow linearly, whatever the reply holds.

Replies of 6, 12, 24, 48 and 96 K characters (1 K = 1,024), measured side by side in one run:
nested and flooded brackets (`{[{[...`, `]]]]...`, balanced `[{...}]`, a ranking inside 48 K
nested lists or after 96 K closing brackets), a final-score name followed by a long run of spaces
(the shapes that made the old regex scans quadratic or worse), and realistic English and Chinese
replies (the test corpus's explanations repeated, the score dict and a ranking at the end). Each
reply is parsed pointwise (with the Chinese URS template, as a run does) and pairwise, with the
cap lifted (`limit=None`) so that the growth of the parser itself shows; the last column parses
the 96 K reply as runs do (only the last `MAX_REPLY_CHARS` read). Each time is the best of
`--repeat` runs taken in turns. Linear growth: time per K constant, (t96 / t6) / 16 close to 1.

    .venv/bin/python bench/bench_parser.py [--repeat 7]
"""

import argparse
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from judging.prompts.building import INTENTS, urs_template
from judging.verdicts.parsing import MAX_REPLY_CHARS, parse_pairwise, parse_pointwise  # (pure, no Django)
from tests.judging.judge_replies import BODY, score_dict

SIZES_K = [6, 12, 24, 48, 96]
CRITERIA = INTENTS["factual_qa"][2]
TEMPLATE = urs_template("factual_qa", "zh")
RANKING = "[{'model': 'model_2', 'rank': 1, 'reason': 'clearer'}, {'model': 'model_1', 'rank': 2, 'reason': 'vaguer'}]"


def realistic(language: str, size: int) -> str:
    ending = "\n" + score_dict(language, "综合得分" if language == "zh" else "Final Score") + "\n" + RANKING
    body = BODY[language] + "\n\n"
    text = body * (size // len(body) + 1)
    return text[: size - len(ending)] + ending


SHAPES = {
    "nested {[{[": lambda size: "{[" * (size // 2),
    "closing ]]]]": lambda size: "]" * size,
    "balanced [{..}]": lambda size: "[{" * (size // 4) + "}]" * (size // 4),
    "[[[ ranking ]]]": lambda size: (
        "[" * ((size - len(RANKING)) // 2) + RANKING + "]" * ((size - len(RANKING) + 1) // 2)
    ),
    "]]]] ranking": lambda size: "]" * (size - len(RANKING)) + RANKING,
    "name + spaces": lambda size: "Final Score" + " " * (size - 11),
    "realistic en": lambda size: realistic("en", size),
    "realistic zh": lambda size: realistic("zh", size),
}


def best_times(repeat: int, calls: dict) -> dict:
    """The best of `repeat` timings of each call, taken in turns so a burst of load elsewhere on
    the machine hits every size alike rather than one."""
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(repeat):
        for key, call in calls.items():
            started = time.perf_counter()
            call()
            best[key] = min(best[key], time.perf_counter() - started)
    return best


def parse_both(text: str, limit: int | None) -> None:
    parse_pointwise(text, criteria=CRITERIA, template=TEMPLATE, limit=limit)
    parse_pairwise(text, limit=limit)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    options = parser.parse_args()
    parse_both(realistic("en", 1024), None)  # templates are squashed once per process: not part of a reply's cost

    header = "".join(f"{size:>5} K" for size in SIZES_K)
    print("pointwise + pairwise, whole reply (limit=None); ms per reply, then microseconds per K")
    print(f"{'reply':<17}{header}   {'us/K 6K':>8} {'us/K 96K':>8}  (t96/t6)/16   capped 96K")
    for name, make in SHAPES.items():
        texts = {size: make(size * 1024) for size in SIZES_K}
        assert all(len(text) == size * 1024 for size, text in texts.items()), name
        calls: dict[int | str, Callable[[], object]] = {
            size: partial(parse_both, text, None) for size, text in texts.items()
        }
        calls["capped"] = partial(parse_both, texts[96], MAX_REPLY_CHARS)
        times = best_times(options.repeat, calls)
        capped = times["capped"]
        cells = "".join(f"{times[size] * 1000:7.2f}" for size in SIZES_K)
        per_k = [times[size] * 1e6 / size for size in (6, 96)]
        ratio = times[96] / times[6] / 16
        print(f"{name:<17}{cells}   {per_k[0]:8.1f} {per_k[1]:8.1f}  {ratio:11.2f}   {capped * 1000:7.2f} ms")
    print(f"(capped: only the last {MAX_REPLY_CHARS:,} characters are read, as in a run)")


if __name__ == "__main__":
    main()
