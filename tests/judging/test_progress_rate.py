"""The rate and ETA in a run's progress, at the pace of a slow local server and of a fast one."""

import pytest

from judging.engine.execution import RATE_WINDOW_SECONDS, RateMeter


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


def test_a_burst_then_silence_falls_to_zero_once_the_window_has_passed():
    # 14 calls failing at once (prompts over the context length), then nothing comes back.
    meter = RateMeter(now=0.0)
    assert meter.update(14, now=1.0) == 14.0
    assert 0 < meter.update(14, now=1.0 + RATE_WINDOW_SECONDS / 2) < 1
    assert meter.update(14, now=2.0 + RATE_WINDOW_SECONDS) == 0.0


def test_a_fast_steady_run_reads_its_rate():
    meter = RateMeter(now=0.0)
    deliveries = [n / 300 for n in range(1, 300 * 40)]  # 300 replies a second for 40 s
    assert feed(meter, deliveries, until=39.5, tick=0.25) == pytest.approx(300, rel=0.02)
