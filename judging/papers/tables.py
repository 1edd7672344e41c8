"""A run's leaderboard (judging.results.boards.run_leaderboard) laid out as the paper prints it, as data
and as text lines (`reproduce`). Pure: no Django. Each benchmark's module (judging/benchmarks/)
names the layout its paper prints.

- URS Table 4: Solve Problem, Factual QA, Text Assistant, Ask for Advice, Seek Creativity,
  Leisure and All (API folded into Solve Problem), a "Cases" row, models by All; the best of a
  column marked '*' as the paper does (it bolds the second and underlines the third: here ² ³).
- AlignBench's results table: 总分, 中文推理 (数学计算, 逻辑推理), 中文语言 (six categories).
- ChineseAlpacaEval Table 1: Model Name, Win Rate(%), Lose Rate(%), Error(%), Length, Rank.
"""

from __future__ import annotations

import unicodedata

from judging.results.leaderboard import URS_INTENT_LABELS, URS_INTENT_ORDER

URS_TABLE_4_INTENTS = URS_INTENT_ORDER[:6]
URS_TABLE_4_LABELS = {**URS_INTENT_LABELS, "all": "All"}
MARKS_AFTER: dict[int | None, str] = {2: "²", 3: "³"}


def _width(text: str) -> int:
    """Display width: a Chinese character takes two columns."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _right(text: str, width: int) -> str:
    return " " * max(0, width - _width(text)) + text


def _left(text: str, width: int) -> str:
    return text + " " * max(0, width - _width(text))


def _number(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _marked(value: str, mark: int | None) -> str:
    """The paper's '*' before the best value of a column; ² and ³ after the next two."""
    if mark == 1:
        return "*" + value + " "
    return value + MARKS_AFTER.get(mark, " ")


def urs_table_4(board: dict) -> dict:
    """Table 4 from a pointwise board grouped by intent (API folded): per model the mean of each
    intent and of all its cases, the best three of each column ranked, models by All."""
    by_intent = board["tables"].get("intent", {"rows": [], "columns": []})
    # API shown apart (not the paper's default) gets its column before All, which counts it either way.
    columns = [*URS_TABLE_4_INTENTS, *(["api"] if "api" in by_intent["columns"] else []), "all"]
    rows, cases = [], dict.fromkeys(columns, 0)
    for row in by_intent["rows"]:
        cells = {intent: row["cells"].get(intent) for intent in columns[:-1]}
        cells["all"] = row["overall"]
        rows.append(
            {
                "model": row["model"],
                "values": {c: (cells[c].mean if cells[c] else None) for c in columns},
                "marks": {c: (cells[c].best if cells[c] else None) for c in columns},
                "failures": cells["all"].failures,
            }
        )
        for column in columns:
            if cells[column] is not None:
                cases[column] = max(cases[column], cells[column].count + cells[column].failures)
    rows.sort(key=lambda r: (r["values"]["all"] is None, -(r["values"]["all"] or 0.0), r["model"]))
    return {"columns": columns, "cases": cases, "rows": rows}


def urs_lines(table: dict) -> list[str]:
    columns = table["columns"]
    lines = [
        "URS Table 4 ("
        + ("API shown apart" if "api" in columns else "API folded into Solve Problem")
        + "; mean final score, 1-10)",
        _left("", 26) + "".join(_right(URS_TABLE_4_LABELS[c], 17) for c in columns) + _right("failures", 10),
        _left("Cases", 26) + "".join(_right(str(table["cases"][c]), 17) for c in columns),
    ]
    for row in table["rows"]:
        cells = ""
        for column in columns:
            cells += _right(_marked(_number(row["values"][column]), row["marks"][column]), 17)
        lines.append(_left(row["model"][:25], 26) + cells + _right(str(row["failures"]), 10))
    lines.append("* best of its column (the paper marks the first '*', bolds the second, underlines the third: ² ³)")
    return lines


def alignbench_lines(table: dict) -> list[str]:
    columns = table["columns"]
    lines = [
        f"AlignBench results ({table['label']})",
        _left("model", 26) + "".join(_right(c, 10) for c in columns) + _right("failures", 10),
    ]
    for row in table["rows"]:
        values = "".join(_right(_number(row["values"][c]), 10) for c in columns)
        lines.append(_left(row["model"][:25], 26) + values + _right(str(row["failures"]), 10))
    lines.append("中文推理 = mean(数学计算, 逻辑推理); 中文语言 = mean of the other six; 总分 = mean of the two")
    return lines


def alpacaeval_table_1(board: dict) -> list[dict]:
    """Table 1's columns from a pairwise board: rates in percent, length, rank (reference at 50 %)."""
    return [
        {
            "model": row["model"],
            "win_rate": 100 * row["win_rate"],
            "lose_rate": 100 * row["lose_rate"],
            "error_rate": 100 * row["error_rate"],
            "tie_rate": 100 * row["tie_rate"],
            "length": row["length"],
            "rank": row["rank"],
            "reference": row["reference"],
        }
        for row in board["pairwise"]
    ]


def alpacaeval_lines(rows: list[dict]) -> list[str]:
    header = ("Model Name", "Win Rate(%)", "Lose Rate(%)", "Error(%)", "Length", "Rank")
    lines = [
        "ChineseAlpacaEval Table 1 (against the reference model; equal win rates: the lower lose rate first)",
        _left(header[0], 30) + "".join(_right(h, 14) for h in header[1:]),
    ]
    for row in rows:
        length = "-" if row["length"] is None else f"{row['length']:.0f}"
        lines.append(
            _left(row["model"][:29], 30)
            + _right(_number(row["win_rate"]), 14)
            + _right(_number(row["lose_rate"]), 14)
            + _right(_number(row["error_rate"]), 14)
            + _right(length, 14)
            + _right("–" if row["rank"] is None else str(row["rank"]), 14)
            + ("  (reference)" if row["reference"] else "")
        )
    if any(row["tie_rate"] for row in rows):
        lines.append("Ties (both orders judged, inconsistent) count half a win.")
    return lines


def _interval(row: dict, prefix: str = "") -> str:
    score, lower, upper = row[f"{prefix}score"], row[f"{prefix}lower"], row[f"{prefix}upper"]
    if score is None or lower is None or upper is None:
        return "-"
    return f"(-{score - lower:.2f}, +{upper - score:.2f})"


def arena_lines(table: dict) -> list[str]:
    """Arena-Hard-Auto's leaderboard: model, score (win rate against the baseline, %), 95 % CI
    (below, above), average answer length; then the same with style control."""
    unit = table.get("length_unit", "characters")
    lines = [
        f"Arena-Hard-Auto v0.1 leaderboard (win rate against {table.get('baseline', '-')}, %; each order its own "
        "battle; 95% CI from 100 bootstrap rounds)",
        _left("Model", 36) + _right("Score", 9) + _right("95% CI", 18) + _right(f"Avg. #{unit}", 20),
    ]
    for row in table["rows"]:
        length = "-" if row["avg_length"] is None else str(int(row["avg_length"]))
        lines.append(
            _left(row["model"][:35], 36)
            + _right(_number(row["score"]), 9)
            + _right(_interval(row), 18)
            + _right(length, 20)
        )
    styled = [row for row in table["rows"] if row.get("style_score") is not None]
    if styled:
        lines += [
            "",
            "Style control (length, headers, list items, bold)",
            _left("Model", 36) + _right("Score", 9) + _right("95% CI", 18),
        ]
        for row in sorted(styled, key=lambda r: (-r["style_score"], r["model"])):
            lines.append(
                _left(row["model"][:35], 36)
                + _right(_number(row["style_score"]), 9)
                + _right(_interval(row, "style_"), 18)
            )
    if unit != "tokens":
        lines.append(f"Lengths in {unit}: no tokenizer whose encoding ships in its package is installed.")
    return lines
