"""Plot geometry: ticks a reader can read, labels never cut, intents by their names."""

import pytest

from core import plots
from curation.choices import intent_label


@pytest.mark.parametrize(
    "low, high, expected",
    [
        (-1.82, 0.95, ["-2", "-1", "0", "1"]),
        (0.0, 100.0, ["0", "25", "50", "75", "100"]),
        (3.61, 5.58, ["3.5", "4.0", "4.5", "5.0", "5.5", "6.0"]),
        (-0.031, 0.012, ["-0.04", "-0.02", "0", "0.02"]),
    ],
)
def test_ticks_fall_on_round_numbers_around_the_values(low, high, expected):
    start, end, step = plots.nice_range(low, high)
    assert start <= low and end >= high
    assert [plots.tick_text(v, step) for v in plots.ticks(start, end, step)] == expected


def test_a_long_label_is_wrapped_whole_never_cut():
    lines = plots.wrap_label("nc3-strong-reasoning_model", columns=10, max_lines=5)
    assert "".join(lines) == "nc3-strong-reasoning_model"
    assert all(len(line) <= 10 for line in lines)
    assert plots.wrap_label("nc3-strong") != plots.wrap_label("nc3-strict")


def test_chinese_characters_count_double_and_break_anywhere():
    lines = plots.wrap_label("通义千问大模型专业版", columns=8)
    assert "".join(lines) == "通义千问大模型专业版"
    assert lines[0] == "通义千问"


def test_past_the_last_line_an_ellipsis_says_more_was_there():
    lines = plots.wrap_label("a b c d e f g h i j k l", columns=3, max_lines=2)
    assert len(lines) == 2 and lines[-1].endswith("…")


def test_interval_rows_grow_with_their_label_lines():
    short = plots.interval_bars([("a", 0.1, -0.2, 0.3), ("b", -0.1, -0.4, 0.2)])
    long = plots.interval_bars([("a very long model name indeed", 0.1, -0.2, 0.3), ("b", -0.1, -0.4, 0.2)])
    assert long["rows"][0]["lines"] == ["a very long", "model name", "indeed"]
    assert long["height"] > short["height"]
    assert [t["text"] for t in short["ticks"]] == ["-0.4", "-0.2", "0", "0.2", "0.4"]


def test_intents_read_as_names_in_the_active_language():
    assert intent_label("factual_qa") == "Factual QA"
    assert intent_label("made_up_intent") == "made up intent"
