"""The benchmarks, registered once: each paper's method is one module of this folder
(judging/benchmarks/<name>.py) that builds a `Benchmark` and calls `benchmark_register`. Pure:
no Django (the modules themselves may use it; this file only holds what they register).

Everything else asks here: the command-line choices (`import_dataset --format`, `generate
--preset`, `judge --template-set`, `reproduce --benchmark`), the forms, which templates judge an
item, how a verdict is read, a run's extra tables, the paper's table. A benchmark's dataset
format is registered at the same time with curation (curation/registry.py), which may not import
judging. The modules are found by listing this folder (`benchmarks_load`, called as judging's
app loads), so adding a benchmark adds files and edits none.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curation.registry import DatasetFormat, format_register, format_unregister

DEFAULT_TEMPERATURE = 0.7


@dataclass(frozen=True)
class GenerationPreset:
    """How a benchmark's authors asked the candidate models for their answers."""

    name: str
    source: str
    # None: no temperature is sent, so each service's default applies.
    temperature: float | None = DEFAULT_TEMPERATURE
    # Per category (AlignBench's table), `temperature` for any other category.
    temperatures: Mapping[str, float] = field(default_factory=dict)
    system_prompt: str = ""
    max_tokens: int | None = None
    label: Any = ""  # the generation form's description (translatable)

    @property
    def temperature_by_category(self) -> bool:
        return bool(self.temperatures)

    def temperature_for(self, category: str) -> float | None:
        return self.temperatures.get(category, self.temperature) if self.temperatures else self.temperature


@dataclass(frozen=True)
class TemplateSet:
    """A set of judge templates an item is judged with: the published texts and the choice of one."""

    name: str  # `judge --template-set`; the templates' names start with "<name>/"
    description: str  # for --help: where the prompts come from
    label: Any  # the run form's description (translatable)
    # The newest published texts: a list of judging.prompts.building.DefaultTemplate.
    templates: Callable[[], list]
    # Which of them judges an item: (intent, category, subcategory, language) -> template name.
    template_for: Callable[..., str]
    # The criteria (canonical names) a template of the set asks for, by template name.
    criteria_for: Callable[[str], list[str]] = lambda name: []
    mode: str = "pointwise"
    # The set a dataset of no benchmark (or of a benchmark of the other mode) is judged with in its mode.
    default: bool = False
    # Pairwise: the benchmark's own verdict reader, (reply, *, answer) -> PairwiseParse
    # (judging.verdicts.parsing); None: parse_pairwise, a ranked list.
    read_verdict: Callable[..., Any] | None = None
    # The system message each template is published with, by template name (a run's own replaces it).
    system_messages: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PublishedConfig:
    """A configuration file the benchmark publishes, which Userbench carries its own copy of:
    `reproduce` checks the copy against the file the researcher has."""

    paths: tuple[str, ...]
    what: str
    expected: Callable[[], object]
    kind: str = "json"  # how the file is read: JSON, or the text exactly as written
    read: Callable[[bytes], object] | None = None  # or read by the benchmark's own function


@dataclass(frozen=True)
class Summary:
    """A table a benchmark adds to a pointwise run's board (e.g. AlignBench's 总分): computed from
    the run's scores when its dataset is the benchmark's and the board is grouped by `group`."""

    group: str
    compute: Callable[..., dict]  # (scores, *, failures_as_minus_one) -> {"columns", "rows", "label"}
    columns: tuple[str, ...]  # the columns kept per model in the board's `<benchmark>` entry


@dataclass(frozen=True)
class Benchmark:
    name: str  # `reproduce --benchmark`
    paper: str
    data_from: str  # where the public data comes from (README, --help)
    format: DatasetFormat  # its item file (import_dataset --format)
    items: tuple[str, ...]  # the item file's paths, in a clone and in a flat folder
    mode: str  # pointwise or pairwise
    # Pointwise: the template sets it may be judged with, the paper's first; pairwise: its one set.
    template_sets: tuple[TemplateSet, ...]
    # The judge's parameters as the authors ran it, and where each comes from.
    judge_temperature: float | None
    judge_max_tokens: int | None
    judge_system_prompt: str
    judge_source: str
    generation_preset: GenerationPreset
    # The paper's table from a run's board: (board) -> (the table as data, its text lines).
    table: Callable[[dict], tuple[object, list[str]]]
    table_groups: tuple[str, ...] = ()  # the board's groups the table reads
    group: str = "category"  # the item field a small slice is spread over
    reference_model: str | None = None
    # Published answers by model name: `<answers>/<model>.jsonl`.
    answers: tuple[str, ...] = ()
    # How a published answers file is read (None: Userbench's answers JSONL or CSV).
    answers_reader: Callable[..., Iterable] | None = None
    published: tuple[PublishedConfig, ...] = ()
    summary: Summary | None = None
    # Pairwise: each order of a pair is its own battle (Arena-Hard), not one verdict by the tie rule.
    battles: bool = False
    # Where it is listed (choices, template sets, tables): by this number, then by name.
    position: int = 100
    # Pairwise: its own leaderboard of a run judged with its templates, (run) -> dict, kept in the
    # run's board under "<name>_table" (Arena-Hard's score, interval, length, style control).
    pairwise_board: Callable[[Any], dict] | None = None

    @property
    def template_set(self) -> TemplateSet:
        return self.template_sets[0]

    def template_sets_names(self) -> list[str]:
        return [ts.name for ts in self.template_sets]


_BENCHMARKS: dict[str, Benchmark] = {}
_LOADED = False


def benchmark_register(benchmark: Benchmark) -> Benchmark:
    """Register a benchmark and, with curation, its dataset format. Registering a name again
    replaces it."""
    _BENCHMARKS[benchmark.name] = benchmark
    format_register(benchmark.format)
    return benchmark


def benchmark_unregister(name: str) -> None:
    """Take a benchmark out again (a test's fake one)."""
    benchmark = _BENCHMARKS.pop(name, None)
    if benchmark is not None:
        format_unregister(benchmark.format.name)


def benchmarks_load() -> None:
    """Import every module of this folder once: each registers its benchmark."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    folder = Path(__file__).parent
    for module in sorted(pkgutil.iter_modules([str(folder)]), key=lambda found: found.name):
        if module.name != "registry" and not module.name.startswith("_"):
            importlib.import_module(f"{__package__}.{module.name}")
    # Curation lists the formats in the benchmarks' order.
    for benchmark in benchmarks().values():
        format_unregister(benchmark.format.name)
        format_register(benchmark.format)


def benchmarks() -> dict[str, Benchmark]:
    benchmarks_load()
    return {b.name: b for b in sorted(_BENCHMARKS.values(), key=lambda b: (b.position, b.name))}


def benchmark_named(name: str) -> Benchmark | None:
    return benchmarks().get(name)


def benchmark_for_source(source: str) -> Benchmark | None:
    """The benchmark whose imports record this dataset source, if any."""
    return next((b for b in benchmarks().values() if b.format.source == source), None)


def template_sets() -> dict[str, TemplateSet]:
    """Every template set of every benchmark, by name, in registration order."""
    return {ts.name: ts for benchmark in benchmarks().values() for ts in benchmark.template_sets}


def pointwise_template_sets() -> dict[str, TemplateSet]:
    return {name: ts for name, ts in template_sets().items() if ts.mode == "pointwise"}


def benchmark_of_template_set(name: str) -> Benchmark | None:
    """The benchmark a template set belongs to."""
    return next((b for b in benchmarks().values() if name in b.template_sets_names()), None)


def template_set_of(template_name: str) -> TemplateSet | None:
    """The set a template name belongs to ("<set>/..."), if it is registered."""
    return template_sets().get(template_name.split("/", 1)[0])


def default_template_set(mode: str) -> TemplateSet:
    """The set that judges, in `mode`, a dataset no benchmark of that mode claims."""
    sets = [ts for ts in template_sets().values() if ts.mode == mode]
    return next((ts for ts in sets if ts.default), sets[0])


def template_set_for_source(source: str, mode: str) -> TemplateSet:
    """The set a dataset of this source is judged with in `mode` unless the run names another."""
    benchmark = benchmark_for_source(source)
    if benchmark is not None:
        for ts in benchmark.template_sets:
            if ts.mode == mode:
                return ts
    return default_template_set(mode)


def generation_presets() -> dict[str, GenerationPreset]:
    return {b.generation_preset.name: b.generation_preset for b in benchmarks().values()}
