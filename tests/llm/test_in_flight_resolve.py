"""`auto` concurrency resolved by one rule: a number asked for, else the endpoint's limit, else auto."""

import pytest

from llm.window import in_flight_resolve


@pytest.mark.parametrize(
    ("requested", "stated", "expected"),
    [
        (4, None, (4, False)),
        (4, 32, (4, False)),
        ("auto", 32, (64, True)),
        (None, 32, (32, False)),
        (None, None, (64, True)),
    ],
)
def test_a_number_asked_for_wins_then_the_stated_limit_then_auto(requested, stated, expected):
    assert in_flight_resolve(requested, stated=stated, auto_ceiling=64) == expected
