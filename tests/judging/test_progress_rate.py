"""The rate and ETA in a run's progress, at the pace of a slow local server and of a fast one."""

import pytest

from judging.engine.execution import RATE_MIN_REPLIES, RATE_WINDOW_SECONDS, RateMeter
from judging.management.progress import progress_line


def feed(meter: RateMeter, deliveries: list[float], until: float, tick: float = 1.0) -> float:
    """Tick every `tick` seconds up to `until`, with one reply at each time in `deliveries`."""
    count, rate, now = 0, 0.0, 0.0
    while now <= until:
        count = sum(1 for at in deliveries if at <= now)
        rate = meter.update(count, now=now)
        now += tick
    return rate


def test_a_server_answering_every_ten_seconds_shows_its_pace_not_zero():
    # A local model with one slot: one reply every 10 s. A rate smoothed per tick fell to 0.0 between
    # two replies, and the ETA disappeared.
    meter = RateMeter(now=0.0)
    rate = feed(meter, deliveries=[10.0 * n for n in range(1, 13)], until=125.0)
    assert rate == pytest.approx(0.1, abs=0.02)


def test_a_burst_then_silence_falls_as_the_silence_lasts():
    # 14 calls failing at once (prompts over the context length), then nothing comes back.
    meter = RateMeter(now=0.0)
    assert meter.update(14, now=1.0) == 14.0
    assert 0 < meter.update(14, now=1.0 + RATE_WINDOW_SECONDS / 2) < 1
    assert meter.update(14, now=2.0 + RATE_WINDOW_SECONDS) < 14 / RATE_WINDOW_SECONDS
    assert meter.update(14, now=1400.0) == pytest.approx(0.01)


def test_a_server_taking_two_minutes_a_call_shows_its_pace_between_replies():
    # A local model on a CPU: the last 30 s hold no reply at all, most of the time. The window
    # stretches back over the last RATE_MIN_REPLIES replies instead of reading 0.0/s.
    meter = RateMeter(now=0.0)
    rate = feed(meter, deliveries=[120.0 * n for n in range(1, 6)], until=610.0, tick=0.5)
    assert RATE_MIN_REPLIES == 3
    assert rate == pytest.approx(3 / 370)  # 3 replies since the one at 240 s
    assert round(1 / rate) == 123  # "123 s/call" and an ETA from it


def test_a_fast_steady_run_reads_its_rate():
    meter = RateMeter(now=0.0)
    deliveries = [n / 300 for n in range(1, 300 * 40)]  # 300 replies a second for 40 s
    assert feed(meter, deliveries, until=39.5, tick=0.25) == pytest.approx(300, rel=0.02)


def progress(**overrides) -> dict:
    base = dict(
        done=2, total=6, parse_failures=0, call_failures=0, prompt_tokens=10, completion_tokens=20,
        in_flight=1, rate_per_second=0.01, seconds_per_call=None, eta_seconds=None,
    )  # fmt: skip
    return {**base, **overrides}


def test_the_command_line_shows_seconds_a_call_for_a_slow_server_and_replies_a_second_for_a_fast_one():
    slow = progress_line(progress(rate_per_second=0.01, seconds_per_call=123.0, eta_seconds=492))
    assert "1 in flight, 123 s/call, ETA 492s," in slow
    fast = progress_line(progress(rate_per_second=41.5, seconds_per_call=0.0, eta_seconds=3))
    assert "1 in flight, 41.5/s, ETA 3s," in fast
    waiting = progress_line(progress(rate_per_second=0.0, seconds_per_call=None))
    assert "1 in flight, 0.0/s, ETA -," in waiting
