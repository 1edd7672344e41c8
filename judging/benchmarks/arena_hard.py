"""Arena-Hard-Auto v0.1 (Li, Chiang et al., lmarena/arena-hard-auto): everything that is this benchmark's.

Its questions (`question.jsonl`: `uid`, `prompt`, `category`, `cluster`), its answer files as
they are published (`model_answer/<model>.jsonl`: `uid`, `model`, `messages`, the reply in
`content.answer`), its judge (arena-hard-v0.1.yaml: the system prompt of utils/judge_utils.py and
the user template, temperature 0, max_tokens 4096, the baseline gpt-4-0314 in both orders), its
verdict regexes, and its leaderboard (model, score, 95 % CI, average tokens: judging/papers/arena_scores.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from django.utils.translation import gettext_lazy as _

from core.import_checks import FormatError, describe, id_field, json_objects, name_field, text_field
from curation.datasets.public_formats import NO_LIMITS, ItemRecord, column_limit
from curation.registry import DatasetFormat
from judging.answers.imports import AnswerRecord, answer_record
from judging.benchmarks.registry import Benchmark, GenerationPreset, PublishedConfig, TemplateSet, benchmark_register
from judging.models import Answer, JudgeRun
from judging.papers.tables import arena_lines
from judging.prompts.building import DefaultTemplate
from judging.verdicts.parsing import COPIED_FROM_ANSWER, ECHOED_EXAMPLE, PairwiseParse, normalise
from stats.style_votes import style_features

NAME = "arena_hard"
BASELINE = "gpt-4-0314"
TEMPLATE = f"{NAME}/pairwise/en"
QUESTION_FIELDS = ("uid", "prompt")

# utils/judge_utils.py, OG_ARENA_HARD_PROMPT: the system prompt of arena-hard-v0.1, verbatim.
JUDGE_SYSTEM = (
    "Please act as an impartial judge and evaluate the quality of the responses provided by two AI assistants to "
    "the user prompt displayed below. You will be given assistant A's answer and assistant B's answer. Your job is "
    "to evaluate which assistant's answer is better.\n\nBegin your evaluation by generating your own answer to the "
    "prompt. You must provide your answers before judging any answers.\n\nWhen evaluating the assistants' answers, "
    "compare both assistants' answers with your answer. You must identify and correct any mistakes or inaccurate "
    "information.\n\nThen consider if the assistant's answers are helpful, relevant, and concise. Helpful means the "
    "answer correctly responds to the prompt or follows the instructions. Note when user prompt has any ambiguity "
    "or more than one interpretation, it is more helpful and appropriate to ask for clarifications or more "
    "information from the user than providing an answer based on assumptions. Relevant means all parts of the "
    "response closely connect or are appropriate to what is being asked. Concise means the response is clear and "
    "not verbose or excessive.\n\nThen consider the creativity and novelty of the assistant's answers when needed. "
    "Finally, identify any missing important information in the assistants' answers that would be beneficial to "
    "include when responding to the user prompt.\n\nAfter providing your explanation, you must output only one of "
    "the following choices as your final verdict with a label:\n\n1. Assistant A is significantly better: "
    "[[A>>B]]\n2. Assistant A is slightly better: [[A>B]]\n3. Tie, relatively the same: [[A=B]]\n4. Assistant B is "
    'slightly better: [[B>A]]\n5. Assistant B is significantly better: [[B>>A]]\n\nExample output: "My final '
    'verdict is tie: [[A=B]]".'
)
# arena-hard-v0.1.yaml, prompt_template, verbatim but for its placeholders' names: {QUESTION},
# {ANSWER_A} and {ANSWER_B} are Userbench's {question}, {output_1} and {output_2}.
USER_TEMPLATE = (
    "<|User Prompt|>\n{question}\n\n<|The Start of Assistant A's Answer|>\n{output_1}\n<|The End of Assistant A's "
    "Answer|>\n\n<|The Start of Assistant B's Answer|>\n{output_2}\n<|The End of Assistant B's Answer|>"
)
PLACEHOLDERS = {"{QUESTION}": "{question}", "{ANSWER_A}": "{output_1}", "{ANSWER_B}": "{output_2}"}


# ---- Questions and answers, as published ---------------------------------------------------------


def read_questions(source, *, columns: Mapping[str, int] = NO_LIMITS) -> list[ItemRecord]:
    """Every record of iter_questions, in a list."""
    return list(iter_questions(source, columns=columns))


def iter_questions(source, *, columns: Mapping[str, int] = NO_LIMITS) -> Iterator[ItemRecord]:
    """question.jsonl: `uid` (unique, the item's id) and `prompt` (the question); `cluster` (the
    item's category, Arena's topic cluster) and `category` (the benchmark's name) when present.
    One record at a time."""
    seen: set[str] = set()
    for line, value in json_objects(source):
        for name in QUESTION_FIELDS:
            if name not in value:
                raise FormatError(line, f"expected the field {name!r}")
        uid = id_field(value["uid"], line, "uid", limit=column_limit(columns, "external_id"))
        if uid in seen:
            raise FormatError(line, f"uid {uid} appears twice")
        seen.add(uid)
        cluster = value.get("cluster")
        category = (
            name_field(cluster, line, "cluster", limit=column_limit(columns, "category")) if cluster is not None else ""
        )
        metadata = {key: value[key] for key in ("category", "cluster") if isinstance(value.get(key), str)}
        yield (
            ItemRecord(
                external_id=uid,
                question=text_field(value["prompt"], line, "prompt"),
                category=category,
                language="en",
                metadata=metadata,
            )
        )
    if not seen:
        raise FormatError(1, "the file has no rows")


def write_questions(items: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    for item in items:
        metadata = item.get("metadata") or {}
        row = {"uid": item["external_id"], "category": metadata.get("category", NAME), "cluster": item["category"]}
        row["prompt"] = item["question"]
        yield json.dumps(row, ensure_ascii=False) + "\n"


FORMAT = DatasetFormat(
    name=NAME,
    label=_("Arena-Hard-Auto (question.jsonl)"),
    fields=("uid", "prompt", "category", "cluster"),
    read=iter_questions,
    write=write_questions,
    source=NAME,
    source_label=_("Arena-Hard-Auto"),
)


def read_answers(source, *, columns: Mapping[str, int] = NO_LIMITS) -> list[AnswerRecord]:
    """Every record of iter_answers, in a list."""
    return list(iter_answers(source, columns=columns))


def iter_answers(source, *, columns: Mapping[str, int] = NO_LIMITS) -> Iterator[AnswerRecord]:
    """A model's answers as Arena-Hard-Auto publishes them (`uid`, `model`, `messages`: the last
    message the assistant's, its reply in `content.answer` or as plain text); a line in
    Userbench's own answers format is read as that. One line at a time, as the answers importer
    matches them: a bad line is refused when it is read, not after the file."""
    count = 0
    for line, value in json_objects(source):
        count += 1
        if "messages" not in value:
            yield answer_record(value, line, columns)
            continue
        messages = value["messages"]
        if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
            raise FormatError(line, f"expected 'messages', a list of messages, found {describe(messages)}")
        content = messages[-1].get("content")
        reply = content.get("answer") if isinstance(content, dict) else content
        if messages[-1].get("role") != "assistant" or not isinstance(reply, str):
            raise FormatError(line, "expected the last message to be the assistant's, its reply in content.answer")
        if "uid" not in value:
            raise FormatError(line, "expected the field 'uid'")
        yield AnswerRecord(
            line=line,
            response=text_field(reply, line, "content.answer", blank=True),
            question_id=id_field(value["uid"], line, "uid", limit=column_limit(columns, "external_id")),
        )
    if not count:
        raise FormatError(1, "the file has no rows")


# ---- The verdict ---------------------------------------------------------------------------------

# arena-hard-v0.1.yaml, regex_patterns: tried in order over the reply in capitals; the last match
# of the first pattern that matches is the verdict (gen_judgment.py, get_score).
PATTERNS = (re.compile(r"\[\[([AB<>=]+)\]\]"), re.compile(r"\[([AB<>=]+)\]"))
VERDICTS = {
    "A>>B": ("model_1", 2),
    "A>B": ("model_1", 1),
    "A=B": (None, 1),
    "B>A": ("model_2", 1),
    "B>>A": ("model_2", 2),
}
NO_VERDICT = "no [[A>B]]-style verdict in the reply"
# A verdict is the prompt's own when this much of the text before it is copied from the prompt
# (the list of choices, the example output): a judge's own "My final verdict is tie: [[A=B]]"
# follows its own explanation.
_COPIED_CHARS = 60
_SQUASH = re.compile(r"\s+")


def _squashed(text: str) -> str:
    return _SQUASH.sub("", normalise(text)).upper()


_PROMPT = _squashed(JUDGE_SYSTEM + "\n" + USER_TEMPLATE)


def read_verdict(text: str, *, answer: str = "") -> PairwiseParse:
    """The verdict as Arena-Hard-Auto reads it; a copy of the prompt's choices or example, or of a
    verdict inside the answer under test, is refused."""
    reply = text or ""
    upper = reply.upper()
    for pattern in PATTERNS:
        matches = [match for match in pattern.finditer(upper) if match.group(1)]
        if not matches:
            continue
        last = matches[-1]
        label = last.group(1).strip("\n")
        before = _squashed(upper[max(0, last.start() - 4 * _COPIED_CHARS) : last.start()])[-_COPIED_CHARS:]
        copied = before + _squashed(last.group(0))
        if len(before) >= _COPIED_CHARS and copied in _PROMPT:
            return PairwiseParse(None, ECHOED_EXAMPLE)
        if answer and len(before) >= 16 and copied[-(16 + len(last.group(0))) :] in _squashed(answer):
            return PairwiseParse(None, COPIED_FROM_ANSWER)
        if label not in VERDICTS:
            return PairwiseParse(None, f"the verdict [[{label}]] is not one of {', '.join(VERDICTS)}")
        winner, strength = VERDICTS[label]
        return PairwiseParse(winner, tie=winner is None, strength=strength, label=label)
    return PairwiseParse(None, NO_VERDICT)


def _yaml_prompt_template(text: str) -> str | None:
    """The `prompt_template` of arena-hard-v0.1.yaml (a double-quoted YAML string, JSON's escapes),
    its placeholders named as Userbench names them; None when the file holds none."""
    match = re.search(r'^prompt_template:\s*("(?:[^"\\]|\\.)*")', text, re.MULTILINE)
    if match is None:
        return None
    template = json.loads(match.group(1))
    for theirs, ours in PLACEHOLDERS.items():
        template = template.replace(theirs, ours)
    return template


def _templates() -> list[DefaultTemplate]:
    return [DefaultTemplate(TEMPLATE, "pairwise", "en", USER_TEMPLATE)]


TEMPLATES = TemplateSet(
    name=NAME,
    description="Arena-Hard-Auto v0.1 (arena-hard-v0.1.yaml): its judge's system prompt and user template, "
    "the verdict read by its regexes",
    label=_("Arena-Hard-Auto: its judge prompt, [[A>B]] verdicts, each order its own battle"),
    templates=_templates,
    template_for=lambda **_item: TEMPLATE,
    mode="pairwise",
    read_verdict=read_verdict,
    system_messages={TEMPLATE: JUDGE_SYSTEM},
)


# ---- The leaderboard ----------------------------------------------------------------------------


def answer_length():
    """(unit, counter): answers measured in cl100k tokens when a tokenizer whose encoding ships in
    its package is installed (bpe-openai), else in characters; nothing is ever downloaded."""
    try:
        # Optional: only where the package is installed; its encodings are compiled into it.
        import bpe_openai  # type: ignore[import-not-found]

        encoding = bpe_openai.cl100k_base()
        encoding.count("probe")
    except Exception:  # noqa: BLE001 - missing, or a version whose API differs: characters then
        return "characters", len
    return "tokens", encoding.count


def run_board(run: JudgeRun, *, baseline: str = BASELINE) -> dict:
    """A run's leaderboard as Arena-Hard-Auto shows it, from its judgments (each one a battle) and
    the answers they judged."""
    # Imported here, not with the module: every process registers the benchmarks when it starts,
    # and the scores' SciPy would add a quarter of a second to each start-up (`manage.py judge`
    # included) that only a leaderboard needs.
    from judging.papers.arena_scores import arena_leaderboard, average_length, battle_of

    judgments = list(
        run.judgments.replied().filter(model__is_probe=False).values_list("item_id", "model__name", "outcome", "scores")
    )
    battles = []
    for item_id, model, outcome, scores in judgments:
        battle = battle_of(model=model, outcome=outcome, strength=(scores or {}).get("strength", 1), item=item_id)
        if battle is not None:
            battles.append(battle)
    models = {battle.model for battle in battles} | {baseline}
    items = {item_id for item_id, _model, _outcome, _scores in judgments}
    texts: dict[tuple[str, object], str] = {
        (model, item): text
        for item, model, text in Answer.objects.filter(
            item__dataset=run.dataset, model__name__in=models, item_id__in=items
        ).values_list("item_id", "model__name", "text")
    }
    unit, counter = answer_length()
    features = {key: style_features(text, length=counter) for key, text in texts.items()}
    usable = [b for b in battles if (b.model, b.item) in features and (baseline, b.item) in features]
    lengths = {
        model: average_length([text for (name, _item), text in texts.items() if name == model], counter)
        for model in models
    }
    rows = arena_leaderboard(usable, baseline=baseline, lengths=lengths, features=features, seed=run.seed)
    return {
        "baseline": baseline,
        "length_unit": unit,
        "rows": [row.as_dict() for row in rows],
        "battles": sum(b.weight for b in usable),
        "dropped": len(judgments) - len(battles),
    }


def paper_table(board: dict) -> tuple[object, list[str]]:
    table = board.get(f"{NAME}_table") or {"rows": [], "length_unit": "characters", "baseline": BASELINE}
    return table, arena_lines(table)


BENCHMARK = benchmark_register(
    Benchmark(
        name=NAME,
        position=4,
        paper="Arena-Hard-Auto v0.1 (leaderboard of 2024-07-31: score, 95% CI, average tokens)",
        data_from="github.com/lmarena/arena-hard-auto: data/arena-hard-v0.1/question.jsonl (500 questions) and "
        "model_answer/<model>.jsonl (gpt-4-0314, the baseline, and the models to rank)",
        format=FORMAT,
        items=("question.jsonl", "data/arena-hard-v0.1/question.jsonl"),
        mode="pairwise",
        template_sets=(TEMPLATES,),
        judge_temperature=0.0,
        judge_max_tokens=4096,
        judge_system_prompt=JUDGE_SYSTEM,
        judge_source="arena-hard-v0.1.yaml (judge gpt-4-1106-preview, temperature 0, max_tokens 4096, its prompt "
        "template) and utils/judge_utils.py (the system prompt); both orders against gpt-4-0314, each its own battle",
        generation_preset=GenerationPreset(
            name=NAME,
            source="Arena-Hard-Auto's gen_answer_config.yaml: temperature 0, max_tokens 4096, the question alone",
            temperature=0.0,
            max_tokens=4096,
            label=_("Arena-Hard-Auto: temperature 0, 4096 tokens, the question alone"),
        ),
        table=paper_table,
        group="category",
        reference_model=BASELINE,
        answers=("model_answer", "data/arena-hard-v0.1/model_answer"),
        answers_reader=iter_answers,
        published=(
            PublishedConfig(
                ("arena-hard-v0.1.yaml", "config/arena-hard-v0.1.yaml"),
                "the judge's user template (prompt_template)",
                lambda: USER_TEMPLATE,
                read=lambda data: _yaml_prompt_template(data.decode("utf-8")),
            ),
        ),
        battles=True,
        pairwise_board=run_board,
    )
)
