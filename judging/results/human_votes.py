"""Human pairwise votes as the judge's diagnostics need them, without judging importing annotation.

Votes live in the annotation app, which sits above judging. So annotation registers a source
at start-up (annotation/apps.py) and the run's diagnostics ask every registered source; with
none registered (annotation not installed) there are simply no human votes to compare with.

A source is `fn(*, dataset) -> {(item_id, first_model, second_model): [label, ...]}`: one entry
per question and unordered pair of models, the names sorted, each label "first" (the
alphabetically first model won), "second" or "tie"; cannot-determine votes left out.

A run's stored figures (judging/results/figures.py) hold its diagnostics, so they must know when the
votes changed: each source may register a marker too, `fn(*, dataset) -> value`, cheap to read
(a count and the newest id), that changes whenever a vote is cast, taken back or imported.
"""

from collections.abc import Callable

HumanVerdicts = dict[tuple[int, str, str], list[str]]
HumanVerdictSource = Callable[..., HumanVerdicts]

_SOURCES: list[HumanVerdictSource] = []
_MARKERS: list[Callable[..., object]] = []


def human_verdict_source(fn: HumanVerdictSource) -> HumanVerdictSource:
    """Register `fn` (idempotent: registering the same function twice keeps one)."""
    if fn not in _SOURCES:
        _SOURCES.append(fn)
    return fn


def human_verdicts(*, dataset) -> HumanVerdicts:
    """Every registered source's votes on the dataset, merged per question and model pair."""
    merged: HumanVerdicts = {}
    for source in _SOURCES:
        for unit, labels in source(dataset=dataset).items():
            merged.setdefault(unit, []).extend(labels)
    return merged


def human_votes_marker_source(fn: Callable[..., object]) -> Callable[..., object]:
    """Register `fn(*, dataset)`, a value that changes with the dataset's votes (idempotent)."""
    if fn not in _MARKERS:
        _MARKERS.append(fn)
    return fn


def human_votes_marker(*, dataset) -> list:
    """What every registered marker says of the dataset's votes now (empty: no human votes)."""
    return [marker(dataset=dataset) for marker in _MARKERS]
