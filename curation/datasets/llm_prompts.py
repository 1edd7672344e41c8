"""What curation's LLM steps send: the reference-drafting prompt (and its "draft again" turn),
ChineseAlpacaEval's two translation prompts, the requests built from them, and the clean-up of
a reply. Plain text and requests only: the jobs that send them are in curation/datasets/llm_steps.py.
"""

from curation.models import Item
from llm.calls import ChatRequest

REFERENCE_SYSTEM = {
    "en": (
        "You are a knowledgeable, careful assistant writing a reference answer for an evaluation "
        "benchmark. Answer the user's question as a very good assistant would: correct, clear, "
        "complete and genuinely helpful, without padding. Answer in English."
    ),
    "zh": (
        "你是一位知识渊博、严谨细致的助手，正在为评测基准撰写参考答案。请像一位非常优秀的助手那样回答用户的问题："
        "准确、清晰、完整、真正有帮助，不要堆砌无关内容。请用中文回答。"
    ),
}

# ChineseAlpacaEval 2.1, Figure 1 (translation).
TRANSLATE_SYSTEM = (
    "You are a helpful assistant. Your task is to refer to the queries provided by users in other languages and "
    "create a query that a Chinese user would ask. You are required to make it fluent, while also localizing them "
    "as much as possible to fit the speech habits of mainland China. However, proper nouns cannot be changed, and "
    "foreign names, place names, code snippets, abbreviations, etc. do not need to be converted to Chinese."
)
TRANSLATE_USER = (
    "Please refer to the query provided by users in other languages and create a query that a Chinese user would "
    "ask. Note that proper nouns cannot be changed. You only need to give the converted text, not the explanatory "
    'information, hints or prompts. Here is the query to be converted: "{query}"\n\n'
    "Please write below how a Chinese user would express this query:"
)
# ChineseAlpacaEval 2.2, Figure 2 (Chinese background replacement): the instruction is in
# Chinese because the English one localised poorly in the authors' tests.
LOCALISE_SYSTEM = (
    "You are a helpful assistant. Your task is to refer to the queries provided by users in other languages and "
    "create a query that a Chinese user would ask. You are required to make it fluent, while also localizing them "
    "as much as possible to fit the speech habits of mainland China."
)
LOCALISE_USER = (
    "请参考其它国家用户提出的问题，创建一个中国用户会提出的问题。尽量将问题对象替换为中国的，并使其符合中国背景。"
    "注意您需要使问题内容更多样化，同时也需要符合事实。没有指定特定国家背景或是背景为著名人物、事物、地点的指令则不需要进行中文本地化。"
    '您只需要给出转换后的问题，不需要任何提示信息。\n\n这里是待转换的问题: "{query}"\n\n请在下面写出转换后的问题:'
)


# "Draft again": the model sees the draft the reviewer did not take. Without it the request
# would be the first one again, answered from the response cache with the same text.
REDRAFT_USER = {
    "en": (
        "A reviewer did not accept this answer. Write the reference answer again, better and in your own "
        "words. Give only the answer."
    ),
    "zh": "审核人员没有采纳这个回答。请重新撰写参考答案，写得更好，并换一种写法。只给出答案本身。",
}


def reference_request(item: Item, model: str, previous: str = "", max_tokens: int | None = None):
    """The drafting request for an item; with `previous`, a request for a new draft instead of it."""
    language = item.language if item.language in REFERENCE_SYSTEM else "en"
    messages: tuple[tuple[str, str], ...] = (("system", REFERENCE_SYSTEM[language]), ("user", item.question))
    if previous:
        messages += (("assistant", previous), ("user", REDRAFT_USER[language]))
    return ChatRequest(model=model, messages=messages, max_tokens=max_tokens)


def translate_request(text: str, model: str, max_tokens: int | None = None):
    return ChatRequest(
        model=model,
        messages=(("system", TRANSLATE_SYSTEM), ("user", TRANSLATE_USER.format(query=text))),
        max_tokens=max_tokens,
    )


def localise_request(text: str, model: str, max_tokens: int | None = None):
    # Step 2 works on step 1's output (translate, then replace the background), so the
    # reviewer can compare the plain translation with the localised one.
    return ChatRequest(
        model=model,
        messages=(("system", LOCALISE_SYSTEM), ("user", LOCALISE_USER.format(query=text))),
        max_tokens=max_tokens,
    )


def clean_reply(text: str) -> str:
    """Strip whitespace and the quotes a model often wraps a converted query in."""
    text = (text or "").strip()
    for left, right in (('"', '"'), ("“", "”"), ("「", "」")):
        if len(text) >= 2 and text.startswith(left) and text.endswith(right):
            text = text[1:-1].strip()
    return text
