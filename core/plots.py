"""The one SVG plot module: geometry for the server-rendered plots. Pure functions, no Django.

Templates draw inline SVG from the numbers these return (no plotting library, no CDN);
labels stay plain strings and are escaped there. Leaderboard bars with 95 % whiskers,
judge-against-BT scatter plots, and dot-and-whisker interval rows.

The plots are drawn 400 units wide: a phone's column (about 360 CSS pixels) shows them at
nine tenths of their size, so the 13-unit text the stylesheets set stays about 12 px there.
Axes run between "nice" ticks (1, 2, 2.5 or 5 times a power of ten) and labels are wrapped
onto lines, never cut: a reader must be able to tell "nc3-strong" from "nc3-strict".
"""

import math
import unicodedata
from collections.abc import Callable, Sequence

WIDTH, HEIGHT, MARGIN = 400, 300, 48
# Room below an axis for its ticks and its title.
TICKS_BELOW, TITLE_BELOW = 16, 34
LINE = 15  # the height of one line of label text
STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)


def nice_step(span: float, count: int = 5) -> float:
    """The tick spacing (1, 2, 2.5 or 5 times a power of ten) giving about `count` ticks over `span`."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / max(count - 1, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in STEPS if m * magnitude >= raw * (1 - 1e-9))


def nice_range(low: float, high: float, count: int = 5) -> tuple[float, float, float]:
    """(low, high, step): the range widened to whole steps around the values."""
    if high == low:
        low, high = low - 1, high + 1
    step = nice_step(high - low, count)
    return math.floor(low / step + 1e-9) * step, math.ceil(high / step - 1e-9) * step, step


def tick_text(value: float, step: float) -> str:
    """A tick's text with as many decimals as the step needs (2.5 steps need one more)."""
    magnitude = math.floor(math.log10(step) + 1e-9)
    quarter = round(step / 10**magnitude, 6) == 2.5
    decimals = max(0, -magnitude + (1 if quarter else 0))
    text = f"{value:.{decimals}f}"
    return "0" if float(text) == 0 else text


def ticks(low: float, high: float, step: float) -> list[float]:
    count = int(round((high - low) / step))
    return [low + k * step for k in range(count + 1)]


def _width(text: str) -> int:
    """Display width in columns: CJK characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def wrap_label(label: str, columns: int = 16, max_lines: int = 3) -> list[str]:
    """The label on lines of at most `columns` columns, broken after spaces, hyphens,
    underscores and slashes (or anywhere in a word longer than a line). Past `max_lines` the
    last line ends in an ellipsis (the template's tooltip carries the whole label)."""
    pieces: list[str] = []
    word = ""
    for ch in str(label):
        word += ch
        if ch in " -_/" or _width(ch) == 2:
            pieces.append(word)
            word = ""
    if word:
        pieces.append(word)
    lines: list[str] = []
    line = ""
    for piece in pieces:
        while _width(piece) > columns:  # a word longer than a line is cut where it must be
            room = columns - _width(line)
            cut = 0
            while cut < len(piece) and _width(piece[: cut + 1]) <= room:
                cut += 1
            if cut == 0:
                lines.append(line.rstrip())
                line = ""
                continue
            lines.append((line + piece[:cut]).rstrip())
            line, piece = "", piece[cut:]
        if _width(line + piece.rstrip()) > columns:
            lines.append(line.rstrip())
            line = ""
        line += piece
    if line.strip():
        lines.append(line.rstrip())
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: max(len(lines[-1]) - 1, 1)] + "…"
    return lines or [""]


def _scale(
    values: Sequence[float], low_px: float, high_px: float, count: int = 5
) -> tuple[Callable[[float], float], tuple[float, float, float]]:
    low, high, step = nice_range(min(values), max(values), count)
    return (lambda v: low_px + (v - low) / (high - low) * (high_px - low_px)), (low, high, step)


def scatter(points: list[tuple[str, float, float]]) -> dict | None:
    """Scatter of (label, x, y) points in a WIDTH x HEIGHT box with axes, ticks and room for the
    axis titles (`x_title_y`, and the y title above the axis at `top`)."""
    if not points:
        return None
    left, right, top, bottom = MARGIN, WIDTH - 16, 28, HEIGHT - MARGIN
    to_x, (x_low, x_high, x_step) = _scale([p[1] for p in points], left, right)
    to_y, (y_low, y_high, y_step) = _scale([p[2] for p in points], bottom, top)
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": left,
        "bottom": bottom,
        "right": right,
        "top": top,
        "x_title_y": bottom + TITLE_BELOW,
        "points": [
            {
                "label": label,
                "lines": wrap_label(label, 14, 2),
                "x": round(to_x(x), 1),
                "y": round(to_y(y), 1),
                # Labels of points near the right edge go to their left, so none runs off the plot.
                "anchor": "end" if to_x(x) > right - 100 else "start",
            }
            for label, x, y in points
        ],
        "x_ticks": [{"at": round(to_x(v), 1), "text": tick_text(v, x_step)} for v in ticks(x_low, x_high, x_step)],
        "y_ticks": [{"at": round(to_y(v), 1), "text": tick_text(v, y_step)} for v in ticks(y_low, y_high, y_step)],
    }


INTERVAL_LABEL = 124  # the label column of interval rows and bars


def interval_bars(rows: list[tuple[str, float, float | None, float | None]]) -> dict | None:
    """Horizontal dot-and-whisker rows of (label, estimate, lower, upper), labels wrapped."""
    if not rows:
        return None
    values = [v for row in rows for v in row[1:] if v is not None]
    to_x, (low, high, step) = _scale(values, INTERVAL_LABEL + 8, WIDTH - 16)
    out = []
    y = 12
    for label, estimate, lower, upper in rows:
        lines = wrap_label(label, 16)
        height = max(26, LINE * len(lines) + 8)
        mid = y + height / 2
        out.append(
            {
                "label": label,
                "lines": lines,
                "y": mid,
                # The first line's baseline, so the lines sit centred on the row.
                "text_y": round(mid - LINE * (len(lines) - 1) / 2 + 4, 1),
                "x": round(to_x(estimate), 1),
                "x1": round(to_x(lower if lower is not None else estimate), 1),
                "x2": round(to_x(upper if upper is not None else estimate), 1),
            }
        )
        y += height
    axis_y = y + 4
    return {
        "width": WIDTH,
        "height": axis_y + TITLE_BELOW + 8,
        "rows": out,
        "label_right": INTERVAL_LABEL,
        "zero": round(to_x(0.0), 1) if low <= 0 <= high else None,
        "axis_y": axis_y,
        "tick_y": axis_y + TICKS_BELOW,
        "title_y": axis_y + TITLE_BELOW,
        "title_x": round((INTERVAL_LABEL + 8 + WIDTH - 16) / 2, 1),
        "ticks": [{"at": round(to_x(v), 1), "text": tick_text(v, step)} for v in ticks(low, high, step)],
    }


BAR_WIDTH, RIGHT = WIDTH, 16


def bar_chart(rows: list[tuple[str, float | None, float | None, float | None]], *, top: float) -> dict | None:
    """Horizontal bars of (label, value, low, high) on a 0..top axis; None values are skipped."""
    rows = [row for row in rows if row[1] is not None]
    if not rows:
        return None
    span = BAR_WIDTH - INTERVAL_LABEL - RIGHT

    def x(value: float) -> float:
        return round(INTERVAL_LABEL + span * max(0.0, min(value, top)) / top, 1)

    bars = []
    y = 8
    for label, value, low, high in rows:
        assert value is not None  # rows without a value were dropped above
        lines = wrap_label(label, 16)
        height = max(24, LINE * len(lines) + 6)
        mid = y + height / 2
        bars.append(
            {
                "label": label,
                "lines": lines,
                "text_y": round(mid - LINE * (len(lines) - 1) / 2 + 4, 1),
                "bar_y": round(mid - 8, 1),
                "mid": round(mid, 1),
                "cap_top": round(mid - 6, 1),
                "cap_bottom": round(mid + 6, 1),
                "width": round(x(value) - INTERVAL_LABEL, 1),
                "end": x(value),
                "low": x(low) if low is not None else None,
                "high": x(high) if high is not None else None,
                "text": f"{value:.2f}" if top <= 10 else f"{value:.1f}",
            }
        )
        y += height
    step = nice_step(top)
    tick_marks = [{"x": x(v), "text": tick_text(v, step)} for v in ticks(0.0, top, step)]
    axis = y + 2
    return {
        "width": BAR_WIDTH,
        "height": axis + TITLE_BELOW + 8,
        "left": INTERVAL_LABEL,
        "axis": axis,
        "tick_y": axis + TICKS_BELOW,
        "title_y": axis + TITLE_BELOW,
        "title_x": round(INTERVAL_LABEL + span / 2, 1),
        "bars": bars,
        "ticks": tick_marks,
    }
