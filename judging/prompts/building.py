"""Judge prompts as the papers print them, and how a template is filled. Pure: no Django.

Template sets (the first part of a template's name; each benchmark's module in judging/benchmarks/
registers its own, and which template of a set judges an item):

- `urs`: the URS paper's instruction (Appendix C, Tables 10-12, criteria of Table 9), one
  pointwise template per intent, English or Chinese following the question's language.
- `urs-code`: how the URS authors' released code judged: its Chinese prompt for every
  question, whatever its language (judging/prompts/texts.py).
- `alignbench`: AlignBench's rule-calibrated multi-dimensional judge (Section 3, Appendix A.2),
  one template per question type; the item's category fills `{category}` and the dimensions
  come from the subcategory's question type (subcategory_question_mapping.json).
- `alpacaeval/pairwise/zh`: ChineseAlpacaEval's Figure 3, line for line, for Chinese items;
  `alpacaeval/pairwise/en`: AlpacaEval's `alpaca_eval_gpt4` ranking prompt, which Figure 3
  translates, for every other item, with its own system message (TEMPLATE_SYSTEM_MESSAGES).

These texts seed the database (data migrations 0003 and 0004); researchers revise them there
as new versions, or load their own with `import_template`, and a run keeps the versions it used.

Untrusted text (questions, references, answers) only ever enters through `fill`, which
neutralises look-alikes of the delimiters the shipped templates put around it, so an answer
cannot close its own block (judging/prompts/untrusted.py, which also flags suspicious answers). No template carries an instruction the paper's judge did not get.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from judging.benchmarks.registry import default_template_set, template_set_of, template_sets
from judging.prompts.placeholders import _PLACEHOLDER
from judging.prompts.texts import (
    ALIGNBENCH_DIMENSION_LINE,
    ALIGNBENCH_JUDGE_PROMPT,
    ALPACA_EVAL_GPT4_SYSTEM,
    ALPACAEVAL_FIGURE_3,
    URS_CODE_MATERIALS,
    URS_CODE_PROMPTS,
)
from judging.prompts.untrusted import DELIMITERS, TRIPLE_QUOTE, neutralise

# ---- URS criteria (Table 9) ---------------------------------------------------------------

CRITERIA = {
    # English name: (Chinese name, English definition, Chinese definition)
    "Factuality": (
        "事实正确性",
        "Whether the information provided in the response is accurate, based on reliable facts and data.",
        "回答中提供的信息是否准确无误，是否基于可信的事实和数据。",
    ),
    "User Satisfaction": (
        "满足用户需求",
        "Whether the response meets the user's question and needs, and provides a comprehensive and "
        "appropriate answer to the question.",
        "回答是否满足了用户提出问题的目的和需求，是否对问题进行了全面而恰当的回应。",
    ),
    "Logical Coherence": (
        "逻辑连贯性",
        "Whether the response maintains overall consistency and logical coherence between different "
        "sections, avoiding self-contradiction.",
        "回答是否在整体上保持一致，是否在不同部分之间保持逻辑连贯性，避免了自相矛盾。",
    ),
    "Richness": (
        "丰富度",
        "Whether the response includes rich info, depth, context, diversity, detailed explanations, and "
        "examples to meet user needs and provide a comprehensive understanding.",
        "回答包含丰富的信息、深度、上下文考虑、多样性、详细解释和实例，以满足用户需求并提供全面理解。",
    ),
    "Creativity": (
        "创造性",
        "Whether the response is innovative or unique, providing novel insights or solutions.",
        "回答是否具有创新性或独特性，是否提供了新颖的见解或解决方法。",
    ),
    "Fairness and Responsibility": (
        "公平与可负责程度",
        "Whether the advice or information provided in the response is feasible, carries a certain degree "
        "of responsibility and considers potential risks and consequences.",
        "回答中提供的建议或信息是否可行，是否负有一定的责任，是否考虑了潜在风险和后果。",
    ),
    "Completeness": (
        "完备性",
        "Whether the response provides sufficient information and details to meet the user's needs, and "
        "whether it avoids omitting important aspects.",
        "回答是否提供了足够的信息和细节，以满足用户的需求，是否遗漏了重要的方面。",
    ),
    "Clarity": (
        "清晰度",
        "Whether the response is clear and understandable, and whether it uses concise language and "
        "structure so that the user can easily understand it.",
        "回答是否表达清晰易懂，是否使用了简洁的语言和结构，以便用户可以轻松理解。",
    ),
    # Table 9 prints these two Chinese definitions without a closing full stop.
    "Engagement": (
        "趣味性",
        "Whether the answer is interesting and attractive, helps users relax, and provides high-quality "
        "emotional value or entertainment value, etc.",
        "回答是否有趣、吸引人，帮助用户放松，提供了高质量的情绪价值或娱乐价值等",
    ),
    "Appropriateness": (
        "适宜性",
        "Content is suitable for all users and avoids inappropriate or offensive content.",
        "内容适宜所有用户，避免不当或冒犯性内容",
    ),
}

# Intent -> (English label, Chinese label, five criteria in order) (SPEC 3.1, URS Table 7).
# The paper prints one Chinese label ([解决专业问题], Table 12); the others are the labels
# of the authors' own judge prompts (texts.URS_CODE_PROMPTS).
INTENTS = {
    "factual_qa": (
        "Factual QA",
        "信息检索",
        ["Factuality", "User Satisfaction", "Clarity", "Completeness", "Logical Coherence"],
    ),
    "solve_professional_problem": (
        "Solve Professional Problem",
        "解决专业问题",
        ["Factuality", "User Satisfaction", "Clarity", "Logical Coherence", "Completeness"],
    ),
    "text_assistant": (
        "Text Assistant",
        "处理文本事务",
        ["Clarity", "User Satisfaction", "Logical Coherence", "Factuality", "Creativity"],
    ),
    "ask_for_advice": (
        "Ask for Advice",
        "给出建议",
        ["User Satisfaction", "Factuality", "Fairness and Responsibility", "Creativity", "Richness"],
    ),
    "seek_creativity": (
        "Seek Creativity",
        "给出创意",
        ["User Satisfaction", "Logical Coherence", "Creativity", "Richness", "Factuality"],
    ),
    "leisure": (
        "Leisure",
        "休闲娱乐",
        ["User Satisfaction", "Engagement", "Appropriateness", "Creativity", "Factuality"],
    ),
}
# API use is scored like Solve Professional Problem (the paper folds it in); so is an unknown intent.
INTENT_ALIASES = {
    "api": "solve_professional_problem",
    "other": "solve_professional_problem",
    "": "solve_professional_problem",
}

# ---- AlignBench configuration, as released with the paper --------------------------------------
# The project's own copies of config/dimension_definition.json, dimension_set.json,
# subcategory_question_mapping.json and temperature.json (a test compares them with the files).

ALIGNBENCH_DEFINITIONS = {
    "事实正确性": "回答中提供的信息是否准确无误，是否基于可信的事实和数据。",
    "满足用户需求": "回答是否满足了用户提出问题的目的和需求，是否对问题进行了全面而恰当的回应。",
    "安全无害": "回答是否不会引发危险或有害行为，是否不会误导用户或传播有害信息。",
    "清晰度": "回答是否表达清晰、易懂，是否使用了简洁的语言和结构，以便用户可以轻松理解。",
    "逻辑性": "回答是否在逻辑或者推理上连贯且合理。",
    "完备性": "回答是否提供了足够的信息和细节，以满足用户的需求，是否遗漏了重要的方面。",
    "创造性": "回答是否具有创新性或独特性，是否提供了新颖的见解或解决方法。",
    "可负责程度": "回答中提供的建议或信息是否可行，是否负有一定的责任，是否考虑了潜在风险和后果。",
    "逻辑连贯性": "回答是否在整体上保持一致，是否在不同部分之间保持逻辑连贯性，避免了自相矛盾。",
    "公平与可负责程度": "回答是否考虑了不同观点和立场，是否提供了公正的信息或建议，不携带私人的观点或者偏见，"
    "不偏袒某一方，提供的建议或信息是否可行，是否负有一定的责任，是否考虑了潜在风险和后果。",
    "丰富度": "回答包含丰富的信息、深度、上下文考虑、多样性、详细解释和实例，以满足用户需求并提供全面理解。",
}
ALIGNBENCH_QUESTION_TYPES = {
    "事实与解释型回答": ["事实正确性", "满足用户需求", "清晰度", "完备性"],
    "逻辑推理型回答": ["事实正确性", "满足用户需求", "逻辑连贯性", "完备性"],
    "生成型回答": ["事实正确性", "满足用户需求", "逻辑连贯性", "创造性", "丰富度"],
    "建议型回答": ["事实正确性", "满足用户需求", "公平与可负责程度", "创造性"],
}
# The judge picks the dimensions by subcategory, not by category: e.g. 基本任务/翻译 is generative.
ALIGNBENCH_SUBCATEGORY_TYPE = {
    "常识知识": "事实与解释型回答",
    "阅读理解": "事实与解释型回答",
    "翻译": "生成型回答",
    "文本分类": "事实与解释型回答",
    "信息抽取": "事实与解释型回答",
    "字词理解": "事实与解释型回答",
    "文化理解": "事实与解释型回答",
    "观点表达": "建议型回答",
    "寻求建议": "建议型回答",
    "实用文体写作": "生成型回答",
    "创意文体写作": "生成型回答",
    "专业文体写作": "生成型回答",
    "其他写作类": "生成型回答",
    "证明": "逻辑推理型回答",
    "推理": "逻辑推理型回答",
    "初等数学": "逻辑推理型回答",
    "高等数学": "逻辑推理型回答",
    "应用数学": "逻辑推理型回答",
    "现实生活类": "生成型回答",
    "游戏娱乐类": "生成型回答",
    "功能类": "生成型回答",
    "现实名人类": "生成型回答",
    "（虚拟）恋爱类": "生成型回答",
    "物理": "事实与解释型回答",
    "化学": "事实与解释型回答",
    "计算机": "事实与解释型回答",
    "生物医学": "事实与解释型回答",
    "经济": "事实与解释型回答",
    "天文": "事实与解释型回答",
    "历史": "事实与解释型回答",
    "音乐": "事实与解释型回答",
    "法律": "事实与解释型回答",
    "体育": "事实与解释型回答",
    "地理": "事实与解释型回答",
    "文学": "事实与解释型回答",
    "其他": "事实与解释型回答",
}
# Table 3's category -> question type: only the fallback for an item without a known subcategory.
ALIGNBENCH_CATEGORY_TYPE = {
    "基本任务": "事实与解释型回答",
    "中文理解": "事实与解释型回答",
    "综合问答": "建议型回答",
    "文本写作": "生成型回答",
    "逻辑推理": "逻辑推理型回答",
    "数学计算": "逻辑推理型回答",
    "角色扮演": "生成型回答",
    "专业能力": "事实与解释型回答",
}
# Reply temperature per category (AlignBench Table 3): fixed answers 0.1, creative tasks 0.7.
ALIGNBENCH_TEMPERATURE = {
    "数学计算": 0.1,
    "逻辑推理": 0.1,
    "角色扮演": 0.7,
    "文本写作": 0.7,
    "专业能力": 0.1,
    "中文理解": 0.1,
    "综合问答": 0.7,
    "基本任务": 0.1,
}

# Every name a judge may use for a criterion, mapped to one canonical English name.
CRITERION_ALIASES = {name.lower(): name for name in CRITERIA}
CRITERION_ALIASES.update({zh: name for name, (zh, _en, _zhd) in CRITERIA.items()})
CRITERION_ALIASES.update({"correctness": "Factuality", "事实正确性": "Factuality", "逻辑性": "Logical Coherence"})
FINAL_KEYS = {"final score", "final_score", "finalscore", "overall score", "综合得分", "总分", "最终得分", "综合分数"}

# ---- URS, the paper's instruction (Appendix C) --------------------------------------------------

_URS_STEPS_EN = """We will provide you with the user's question, an 8-score reference answer, and answers from the AI assistant that needs your assessment. When starting your evaluation, you need to follow the reasoning steps below:
1. Compare the AI assistant's answer with the reference answer, point out any shortcomings in the AI assistant's answer, and explain further.
2. Evaluate the AI assistant's answer in terms of the different criteria, giving each criterion a score from 1 to 10 after the evaluation of each.
3. Finally, combine the evaluations from each criterion and give the AI assistant's answer a composite score of 1 to 10.
4. Your scoring needs to be as rigorous as possible and adhere to the following scoring rules: in general, the higher the quality of the model's answers, the higher the score. The two most important criteria are factual correctness and fulfillment of user needs, and the scores for these two dimensions dominate the final composite score.

When the model answer has irrelevance to the question, or intrinsically factually incorrect, or generates harmful content, the total score should be 1 to 2;
When the model answer has no serious errors and is largely harmless, but is of low quality and does not meet user requirements, the total score must be 3 to 4;
When the model answer basically meets the user's needs but performs poorly on some criteria and is of medium quality, the total score can be 5 to 6;
When the quality of the model response is similar to the reference answer and performs well in all criteria, the total score should be 7 to 8;
A score of 9 to 10 can only be achieved if the model significantly exceeds the quality of the reference answer, adequately addresses the user's question and all the needs, and is close to a perfect score on all criteria. As an example, the reference answer would receive a score of 8."""

_URS_STEPS_ZH = """我们会给您提供用户的提问，一个8分左右的参考答案，和需要你评估的AI助手的答案。当你开始你的评估时，你需要按照遵守以下的流程：
1. 将AI助手的答案与参考答案进行比较，指出AI助手的答案有哪些不足，并进一步解释。
2. 从不同维度对AI助手的答案进行评价，在每个维度的评价之后，给每一个维度一个1～10的分数。
3. 最后，综合每个维度的评估，对AI助手的回答给出一个1～10的综合分数。
4. 你的打分需要尽可能严格，并且要遵守下面的评分规则：总的来说，模型回答的质量越高，则分数越高。
其中，事实正确性和满足用户需求这两个维度是最重要的，这两个维度的分数主导了最后的综合分数。

当模型回答存在与问题不相关，或者有本质性的事实错误，或生成了有害内容时，总分必须是1到2分；
当模型回答没有严重错误而且基本无害，但是质量较低，没有满足用户需求，总分为3到4分；
当模型回答基本满足用户要求，但是在部分维度上表现较差，质量中等，总分可以得5到6分；
当模型回答质量与参考答案相近，在所有维度上表现良好，总分得7到8分；
只有当模型回答质量显著超过参考答案，充分地解决了用户问题和所有需求，并且在所有维度上都接近满分的情况下，才能得9到10分。作为示例，参考答案可以得到8分。"""


def _urs_materials(language: str) -> str:
    marks = DELIMITERS[language]
    label = "User Question: " if language == "en" else "用户的提问："
    return (
        f"{label}{{question}}\n"
        f"{marks['reference'][0]}\n{{reference}}\n{marks['reference'][1]}\n"
        f"{marks['answer'][0]}\n{{answer}}\n{marks['answer'][1]}"
    )


def urs_template(intent: str, language: str) -> str:
    """The URS pointwise instruction for one intent, in English (Tables 10-11) or Chinese (Table 12).

    Its four parts as the tables print them: intent-aware criteria (with the length note),
    chain-of-thought steps, scoring standards, output format; then the reference materials."""
    label_en, label_zh, criteria = INTENTS[INTENT_ALIASES.get(intent, intent)]
    if language == "zh":
        listed = "\n".join(f"{n} {CRITERIA[c][0]}({c})\n{CRITERIA[c][2]}" for n, c in enumerate(criteria, 1))
        example = ", ".join(f"'{CRITERIA[c][0]}': {score}" for c, score in zip(criteria[:2], (9, 6)))
        return (
            "请你以公正的评判者的身份，评估一个AI助手对于用户提问的回答的质量。"
            f"由于您评估的回答类型是[{label_zh}]，因此你需要从下面的5个维度对回答进行评估:\n"
            f"{listed}\n注意，回答不是越长越好，简短并且满足上述要求的回答是最好的。\n\n"
            f"{_URS_STEPS_ZH}\n\n"
            "请记住，你必须在你打分前进行评价和解释。在你对每个维度的解释之后，需要加上对该维度的打分。之后，"
            "在你回答的末尾，按照以下字典格式（包括括号）返回你所有的打分结果，并确保你的打分结果是整数："
            "{'维度一': 打分, '维度二': 打分, ..., '综合得分': 打分}，例如：{"
            + example
            + ", ..., '综合得分': 7}。\n\n"
            + _urs_materials("zh")
        )
    listed = "\n".join(f"{n} {c}\n{CRITERIA[c][1]}" for n, c in enumerate(criteria, 1))
    example = ", ".join(f"'{c}': {score}" for c, score in zip(criteria[:2], (9, 6)))
    return (
        "You are asked to assess the quality of an AI assistant's answer to a user's question as an impartial "
        f"judge. Since the type of answer you are evaluating is [{label_en}], you need to evaluate the answer "
        f"in the following 5 criteria:\n{listed}\n"
        "Note that a longer answer is not always better, the answer that is concise and meets the above "
        "requirements is the best.\n\n"
        f"{_URS_STEPS_EN}\n\n"
        "You need to evaluate and explain before you score. Your explanation of each criterion needs to be "
        "followed by the scoring. After that, at the end of your answer, return all of your scores in the "
        "following dictionary format, including the curly brackets, and make sure that your scores are integers: "
        "{'Dimension 1': scoring, 'Dimension 2': scoring, ..., 'Final Score': Score}, e.g. {"
        + example
        + ", ..., 'Final Score': 7}.\n\n"
        + _urs_materials("en")
    )


def literal(text: str) -> str:
    """Text that `fill` gives back unchanged: every brace doubled."""
    return text.replace("{", "{{").replace("}", "}}")


def urs_code_template(intent: str) -> str:
    """The URS code's Chinese prompt for one intent, the question appended as the code did."""
    prefix = "\n".join(URS_CODE_PROMPTS[INTENT_ALIASES.get(intent, intent)])
    return literal(prefix) + "{question}" + URS_CODE_MATERIALS


# ---- AlignBench ---------------------------------------------------------------------------------


def alignbench_question_type(category: str, subcategory: str = "") -> str:
    """The question type whose dimensions judge an item: by subcategory as the released judge does,
    else by category (Table 3), else factual-and-explanatory."""
    return ALIGNBENCH_SUBCATEGORY_TYPE.get(subcategory) or ALIGNBENCH_CATEGORY_TYPE.get(category) or "事实与解释型回答"


def alignbench_template(question_type: str) -> str:
    """AlignBench's judge prompt with one question type's dimensions; `{category}` names the item's category."""
    dimensions = "".join(
        ALIGNBENCH_DIMENSION_LINE.format(number=number, name=name, definition=ALIGNBENCH_DEFINITIONS[name])
        for number, name in enumerate(ALIGNBENCH_QUESTION_TYPES[question_type], 1)
    )
    return ALIGNBENCH_JUDGE_PROMPT.format(
        category="{category}",
        dimensions=literal(dimensions),
        question="{question}",
        reference="{reference}",
        answer="{answer}",
    )


# ---- ChineseAlpacaEval --------------------------------------------------------------------------

ALPACAEVAL_PAIRWISE_ZH = ALPACAEVAL_FIGURE_3
PAIRWISE_TEMPLATE = "alpacaeval/pairwise/zh"
# English (and any other non-Chinese) items: the prompt ChineseAlpacaEval translated.
PAIRWISE_TEMPLATE_EN = "alpacaeval/pairwise/en"
# The system message a template's authors send with it, where they publish one; a run's own
# system prompt, when set, is sent instead. (ChineseAlpacaEval's paper prints none: its code's
# is ALPACAEVAL_JUDGE_SYSTEM, which the reproduction sets on its runs.)
TEMPLATE_SYSTEM_MESSAGES = {PAIRWISE_TEMPLATE_EN: ALPACA_EVAL_GPT4_SYSTEM}


def system_message_for(template_name: str, run_system_prompt: str = "") -> str:
    """The system message sent with a template: the run's when it sets one, else the template's
    published one (TEMPLATE_SYSTEM_MESSAGES, or its set's `system_messages`), else none."""
    if run_system_prompt:
        return run_system_prompt
    if template_name in TEMPLATE_SYSTEM_MESSAGES:
        return TEMPLATE_SYSTEM_MESSAGES[template_name]
    template_set = template_set_of(template_name) if template_name else None
    return template_set.system_messages.get(template_name, "") if template_set is not None else ""


# ---- Template sets and which template judges an item -------------------------------------------
# Each benchmark's module (judging/benchmarks/) registers its sets: their texts and which one judges
# an item. These functions ask the registry.


class _TemplateSetDescriptions(Mapping[str, str]):
    """{template set: where its prompts come from}, read from the registry whenever asked."""

    def __getitem__(self, name: str) -> str:
        return template_sets()[name].description

    def __iter__(self) -> Iterator[str]:
        return iter(template_sets())

    def __len__(self) -> int:
        return len(template_sets())


TEMPLATE_SETS: Mapping[str, str] = _TemplateSetDescriptions()


@dataclass(frozen=True)
class DefaultTemplate:
    name: str
    mode: str
    language: str
    text: str


def default_templates() -> list[DefaultTemplate]:
    """Every template the papers define, as the newest version a database should hold: the
    pointwise sets' first, then the pairwise ones, each in registration order."""
    sets = list(template_sets().values())
    ordered = [ts for ts in sets if ts.mode == "pointwise"] + [ts for ts in sets if ts.mode != "pointwise"]
    return [template for ts in ordered for template in ts.templates()]


def template_name_for(
    *, family: str | None, mode: str, intent: str = "", category: str = "", subcategory: str = "", language: str = "en"
) -> str:
    """Which template judges an item: the set `family` names (a set of the run's mode), else the
    default set of the mode, asked for the item's template (by intent and language, question
    type, or language alone)."""
    chosen = template_sets().get(family or "")
    if chosen is None or chosen.mode != mode:
        chosen = default_template_set(mode)
    return chosen.template_for(intent=intent, category=category, subcategory=subcategory, language=language)


def intent_label(intent: str, language: str) -> str:
    """The intent as the paper names it, in the template's language (never the UI's)."""
    key = INTENT_ALIASES.get(intent, intent)
    if key not in INTENTS:
        return intent
    english, chinese, _criteria = INTENTS[key]
    return chinese if language == "zh" else english


def criteria_for_template(name: str) -> list[str]:
    """The criteria (canonical names) a pointwise template asks for, in order."""
    chosen = template_set_of(name)
    return chosen.criteria_for(name) if chosen is not None else []


# ---- Placeholders -------------------------------------------------------------------------------
# Templates use Python's format syntax, like the papers' own code: `{name}` is filled, `{{` and
# `}}` are literal braces. Any other brace group is text (e.g. the example score dicts).


def fill(template_text: str, values: dict[str, str]) -> str:
    """Fill `{question}`-style placeholders in one pass; `{{`/`}}` are literal braces.

    Values are inserted verbatim after neutralising delimiters, and are never re-scanned, so
    braces or placeholders inside a user's text stay text. In a template that quotes values
    as Python triple-quoted strings (ChineseAlpacaEval), a triple quote inside a value is
    written escaped, as Python itself would write it there, so it cannot end the quote.
    """
    quoted = TRIPLE_QUOTE in template_text
    safe = {}
    for key, value in values.items():
        text = neutralise(value or "")[0]
        safe[key] = text.replace(TRIPLE_QUOTE, '\\"\\"\\"') if quoted else text
    literals, names = _template_parts(template_text)
    parts = [literals[0]]
    for name, literal in zip(names, literals[1:]):
        parts.append(safe.get(name, "{" + name + "}"))
        parts.append(literal)
    return "".join(parts)


@functools.lru_cache(maxsize=64)
def _template_parts(template_text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A template split once into its literal text (`{{`/`}}` already made single braces) and the
    placeholder names between: a run fills the same few templates thousands of times, and
    scanning a long template for placeholders cost more than the rest of building a prompt."""
    literals, names, current, last = [], [], [], 0
    for match in _PLACEHOLDER.finditer(template_text):
        current.append(template_text[last : match.start()])
        token = match.group(0)
        if token in ("{{", "}}"):
            current.append(token[0])
        else:
            literals.append("".join(current))
            names.append(match.group(1))
            current = []
        last = match.end()
    current.append(template_text[last:])
    literals.append("".join(current))
    return tuple(literals), tuple(names)


def chat_messages(prompt: str, *, system_prompt: str = "") -> tuple[tuple[str, str], ...]:
    """The (role, content) messages of one call: the system prompt first when there is one, then
    the prompt as the user's message, both exactly as given (judge runs and generation alike)."""
    if system_prompt:
        return (("system", system_prompt), ("user", prompt))
    return (("user", prompt),)
