"""The one SVG plot module: geometry for the server-rendered plots. Pure functions, no Django.

Templates draw inline SVG from the numbers these return (no plotting library, no CDN);
labels stay plain strings and are escaped there. Leaderboard bars with 95 % whiskers,
judge-against-BT scatter plots, and dot-and-whisker interval rows.
"""

WIDTH, HEIGHT, MARGIN = 480, 320, 48


def _scale(values, low_px, high_px):
    low, high = min(values), max(values)
    if high == low:
        low, high = low - 1, high + 1
    pad = (high - low) * 0.08
    low, high = low - pad, high + pad
    return (lambda v: low_px + (v - low) / (high - low) * (high_px - low_px)), (low, high)


def _ticks(low, high, count=5):
    step = (high - low) / (count - 1)
    return [low + k * step for k in range(count)]


def scatter(points: list[tuple[str, float, float]]) -> dict | None:
    """Scatter of (label, x, y) points in a WIDTH x HEIGHT box with axes and ticks."""
    if not points:
        return None
    to_x, (x_low, x_high) = _scale([p[1] for p in points], MARGIN, WIDTH - MARGIN / 2)
    to_y, (y_low, y_high) = _scale([p[2] for p in points], HEIGHT - MARGIN, MARGIN / 2)
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": MARGIN,
        "bottom": HEIGHT - MARGIN,
        "right": WIDTH - MARGIN / 2,
        "top": MARGIN / 2,
        "points": [{"label": label, "x": round(to_x(x), 1), "y": round(to_y(y), 1)} for label, x, y in points],
        "x_ticks": [{"at": round(to_x(v), 1), "text": f"{v:.2f}"} for v in _ticks(x_low, x_high)],
        "y_ticks": [{"at": round(to_y(v), 1), "text": f"{v:.2f}"} for v in _ticks(y_low, y_high)],
    }


def interval_bars(rows: list[tuple[str, float, float | None, float | None]]) -> dict | None:
    """Horizontal dot-and-whisker rows of (label, estimate, lower, upper)."""
    if not rows:
        return None
    values = [v for row in rows for v in row[1:] if v is not None]
    to_x, (low, high) = _scale(values, 140, WIDTH - MARGIN / 2)
    row_height = 26
    height = 30 + row_height * len(rows) + 30
    out = []
    for k, (label, estimate, lower, upper) in enumerate(rows):
        y = 30 + row_height * k + row_height / 2
        out.append(
            {
                "label": label,
                "y": y,
                "x": round(to_x(estimate), 1),
                "x1": round(to_x(lower if lower is not None else estimate), 1),
                "x2": round(to_x(upper if upper is not None else estimate), 1),
            }
        )
    return {
        "width": WIDTH,
        "height": height,
        "rows": out,
        "zero": round(to_x(0.0), 1) if low <= 0 <= high else None,
        "axis_y": height - 24,
        "ticks": [{"at": round(to_x(v), 1), "text": f"{v:.2f}"} for v in _ticks(low, high)],
    }


BAR_WIDTH, LABEL, RIGHT, ROW = 560, 170, 16, 24


def bar_chart(rows: list[tuple[str, float | None, float | None, float | None]], *, top: float) -> dict | None:
    """Horizontal bars of (label, value, low, high) on a 0..top axis; None values are skipped."""
    rows = [row for row in rows if row[1] is not None]
    if not rows:
        return None
    span = BAR_WIDTH - LABEL - RIGHT

    def x(value: float) -> float:
        return round(LABEL + span * max(0.0, min(value, top)) / top, 1)

    bars = []
    for k, (label, value, low, high) in enumerate(rows):
        assert value is not None  # rows without a value were dropped above
        y = 8 + ROW * k
        bars.append(
            {
                "label": label,
                "y": y,
                "mid": y + ROW / 2 - 4,
                "width": round(x(value) - LABEL, 1),
                "end": x(value),
                "low": x(low) if low is not None else None,
                "high": x(high) if high is not None else None,
                "text": f"{value:.2f}" if top <= 10 else f"{value:.1f}",
            }
        )
    ticks = [{"x": x(top * k / 5), "text": f"{top * k / 5:g}"} for k in range(6)]
    height = 8 + ROW * len(rows) + 22
    return {"width": BAR_WIDTH, "height": height, "left": LABEL, "axis": height - 18, "bars": bars, "ticks": ticks}
