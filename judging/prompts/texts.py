"""The judge prompts exactly as their authors published them. Pure data: no Django, no logic.

Each text is transcribed from its source, quirks included (odd spacing, curly quotes, the
indentation a Python literal carried into the prompt), because a reproduction is only
faithful when the judge reads what the authors' judge read. `judging/prompts/building.py` turns
these into fillable templates; do not tidy them here.
"""

# ---- ChineseAlpacaEval, Figure 3 --------------------------------------------------------------
# The pairwise ranking prompt, in Python format syntax as published: `{instruction}`,
# `{output_1}` and `{output_2}` are filled, `{{`/`}}` are literal braces. The paper's figure
# is the source; its repository ships the same text as eval_prompt_zh.txt.
ALPACAEVAL_FIGURE_3 = (
    "我希望你创建一个针对大语言模型中文能力的排行榜。为此，我将提供给你中文指令以及两个模型对应的中文回复。"
    "请根据中文用户的偏好对这些模型进行排名。所有的输入和输出都应该是Python字典。\n"
    "\n"
    "这里是提供给模型的指令:\n"
    "{{\n"
    '    "instruction": """{instruction}""",\n'
    "}}\n"
    "\n"
    "这里是两个模型的输出:\n"
    "[\n"
    "    {{\n"
    '        "model": "model_1",\n'
    '        "answer": """{output_1}"""\n'
    "    }},\n"
    "    {{\n"
    '        "model": "model_2",\n'
    '        "answer": """{output_2}"""\n'
    "    }}\n"
    "]\n"
    "\n"
    "现在请你按照中文答案的质量对模型进行排序，以便排在第 1 位的模型输出结果最好。然后返回模型名称和排名的列表，"
    "即生成以下输出：\n"
    "[\n"
    "    {{'model': <model-name>, 'rank': <model-rank>}},\n"
    "    {{'model': <model-name>, 'rank': <model-rank>}}\n"
    "]\n"
    "\n"
    "你的回答必须是一个有效的Python字典列表，并且除此之外不应包含任何其他内容，因为我们将直接在Python中执行它。"
    "请提供大多数中文用户会给出的结果。"
)

# ---- ChineseAlpacaEval, the system messages of its released code ----------------------------
# The paper prints no system prompt. The authors' code sends one with every call: with the
# answers asked of each model (CrossmodalGroup/ChineseAlpacaEval generation_demo.py,
# SYSTEM_CONTENT_zh, at temperature 0.7 and max_tokens 2048; the README says every model on the
# leaderboard answered at temperature 0.7), and with the ranking prompt above (evaluate.py,
# SYSTEM_CONTENT, at temperature 0 as the paper's Section 3 says, and max_tokens 2048).
ALPACAEVAL_GENERATION_SYSTEM = "您是一位乐于助人的智能助手。请用中文回复用户的请求。"
ALPACAEVAL_JUDGE_SYSTEM = (
    "You are a helpful assistant that ranks models according to the quality of their Chinese answers."
)

# ---- AlpacaEval, alpaca_eval_gpt4 ------------------------------------------------------------
# The English ranking prompt ChineseAlpacaEval translated, as AlpacaEval publishes it
# (tatsu-lab/alpaca_eval, src/alpaca_eval/evaluators_configs/alpaca_eval_gpt4/alpaca_eval.txt,
# sent at temperature 0 per its configs.yaml). The file is ChatML: AlpacaEval's prompt_to_chatml
# splits it into a system and a user message, each stripped of surrounding whitespace, after
# replacing `{instruction}`, `{output_1}` and `{output_2}` with the values. Here the user message
# is in Python format syntax as the Chinese one is (`{{`/`}}` literal braces), the system message
# apart. Its quirks ("different of large-language models", "a valid Python dictionary" for a list)
# are the published text's.
ALPACA_EVAL_GPT4_SYSTEM = "You are a helpful assistant, that ranks models by the quality of their answers."
ALPACA_EVAL_GPT4_USER = (
    "I want you to create a leaderboard of different of large-language models. To do so, I will give you the instructions (prompts) given to the models, and the responses of two models. Please rank the models based on which responses would be preferred by humans. All inputs and outputs should be python dictionaries.\n"
    "\n"
    "Here is the prompt:\n"
    "{{\n"
    '    "instruction": """{instruction}""",\n'
    "}}\n"
    "\n"
    "Here are the outputs of the models:\n"
    "[\n"
    "    {{\n"
    '        "model": "model_1",\n'
    '        "answer": """{output_1}"""\n'
    "    }},\n"
    "    {{\n"
    '        "model": "model_2",\n'
    '        "answer": """{output_2}"""\n'
    "    }}\n"
    "]\n"
    "\n"
    "Now please rank the models by the quality of their answers, so that the model with rank 1 has the best output. Then return a list of the model names and ranks, i.e., produce the following output:\n"
    "[\n"
    "    {{'model': <model-name>, 'rank': <model-rank>}},\n"
    "    {{'model': <model-name>, 'rank': <model-rank>}}\n"
    "]\n"
    "\n"
    "Your response must be a valid Python dictionary and should contain nothing else because we will directly execute it in Python. Please provide the ranking that the majority of humans would give."
)

# ---- AlignBench, Section 3 and Appendix A.2 --------------------------------------------------
# The rule-calibrated multi-dimensional judge prompt as the paper's released judge (THUDM/AlignBench
# judge.py, `prompt_construct`) builds it, in Python format syntax. `{category}` is the item's
# category (one of the 8), `{dimensions}` one line per dimension of the subcategory's question
# type, each written as ALIGNBENCH_DIMENSION_LINE.
ALIGNBENCH_JUDGE_PROMPT = (
    "你是一个擅长评价文本质量的助手。\n"
    "请你以公正的评判者的身份，评估一个AI助手对于用户提问的回答的质量。由于您评估的回答类型是{category}，"
    "因此你需要从下面的几个维度对回答进行评估:\n"
    "{dimensions}"
    "我们会给您提供用户的提问，高质量的参考答案，和需要你评估的AI助手的答案。当你开始你的评估时，你需要按照遵守以下的流程：\n"
    "1. 将AI助手的答案与参考答案进行比较，指出AI助手的答案有哪些不足，并进一步解释。\n"
    "2. 从不同维度对AI助手的答案进行评价，在每个维度的评价之后，给每一个维度一个1～10的分数。\n"
    "3. 最后，综合每个维度的评估，对AI助手的回答给出一个1～10的综合分数。\n"
    "4. 你的打分需要尽可能严格，并且要遵守下面的评分规则：总的来说，模型回答的质量越高，则分数越高。"
    "其中，事实正确性和满足用户需求这两个维度是最重要的，这两个维度的分数主导了最后的综合分数。"
    "当模型回答存在与问题不相关，或者有本质性的事实错误，或生成了有害内容时，总分必须是1到2分；"
    "当模型回答没有严重错误而且基本无害，但是质量较低，没有满足用户需求，总分为3到4分；"
    "当模型回答基本满足用户要求，但是在部分维度上表现较差，质量中等，总分可以得5到6分；"
    "当模型回答质量与参考答案相近，在所有维度上表现良好，总分得7到8分；"
    "只有当模型回答质量显著超过参考答案，充分地解决了用户问题和所有需求，并且在所有维度上都接近满分的情况下，才能得9到10分。"
    "作为示例，参考答案可以得到8分。\n"
    "请记住，你必须在你打分前进行评价和解释。在你对每个维度的解释之后，需要加上对该维度的打分。之后，在你回答的末尾，"
    "按照以下字典格式（包括括号）返回你所有的打分结果，并确保你的打分结果是整数：\n"
    "{{'维度一': 打分, '维度二': 打分, ..., '综合得分': 打分}}，例如：{{'事实正确性': 9, '满足用户需求': 6, ..., '综合得分': 7}}。\n"
    "用户的提问： {question}\n"
    "[参考答案开始]\n{reference}\n[参考答案结束]\n"
    "[助手的答案开始]\n{answer}\n[助手的答案结束]\n"
)
ALIGNBENCH_DIMENSION_LINE = "{number}. {name}: {definition}\n"

# ---- URS, as its released code judged (Alice1998/URS src/evaluation.py, `prompt_dict`) -------
# One Chinese prompt per intent, used for English and Chinese questions alike; API questions
# got the Solve Professional Problem prompt. These strings were never passed through
# str.format, so their doubled braces reached the judge as written. The code appended the
# question right after the last line, then URS_CODE_MATERIALS.
URS_CODE_MATERIALS = "\n[参考答案开始]\n{reference}\n[参考答案结束]\n[助手的答案开始]\n{answer}\n[助手的答案结束]\n"
URS_CODE_PROMPTS = {
    "factual_qa": (
        "请你以公正的评判者的身份，评估一个AI助手对于用户提问的回答的质量。由于您评估的回答类型是[信息检索]，因此你需要从下面的5个维度对回答进行评估:",
        "    1 事实正确性(Factuality)",
        "    提供的信息是否准确无误，是否基于可信的事实和数据",
        "    2 满足用户需求(User Satisfaction)",
        "    是否满足了用户提出问题的目的和需求，是否对问题进行了全面而恰当的回应",
        "    3 清晰度 (Clarity)",
        "    回答是否表达清晰易懂，是否使用了简洁的语言和结构，以便用户可以轻松理解",
        "    4 完备性 (Completeness)",
        "    回答是否提供了足够的信息和细节，以满足用户的需求，是否遗漏了重要的方面",
        "    5 逻辑连贯性(Logical Coherence)",
        "    回答是否在整体上保持一致，是否在不同部分之间保持逻辑连贯性，避免了自相矛盾",
        "    注意，不要让回答的长度影响你的打分！回答不是越长越好，简洁并且满足上述要求的回答是好的。",
        "",
        "    我们会给您提供用户的提问，高质量的参考答案，和需要你评估的AI助手的答案。当你开始你的评估时，你需要按照遵守以下的流程：",
        "    1. 将AI助手的答案与参考答案进行比较，指出AI助手的答案有哪些不足，并进一步解释。",
        "    2. 从不同维度对AI助手的答案进行评价，在每个维度的评价之后，给每一个维度一个1～10的分数。",
        "    3. 最后，综合每个维度的评估，对AI助手的回答给出一个1～10的综合分数。",
        "    4. 你的打分需要尽可能严格，并且要遵守下面的评分规则：总的来说，模型回答的质量越高，则分数越高。",
        "    其中，事实正确性和满足用户需求这两个维度是最重要的，这两个维度的分数主导了最后的综合分数。",
        "",
        "    当模型回答存在与问题不相关，或者有本质性的事实错误，或生成了有害内容时，总分必须是1到2分；",
        "    当模型回答没有严重错误而且基本无害，但是质量较低，没有满足用户需求，总分为3到4分；",
        "    当模型回答基本满足用户要求，但是在部分维度上表现较差，质量中等，总分可以得5到6分；",
        "    当模型回答质量与参考答案相近，在所有维度上表现良好，总分得7到8分；",
        "    只有当模型回答质量显著超过参考答案，充分地解决了用户问题和所有需求，并且在所有维度上都接近满分的情况下，才能得9到10分。",
        "    作为示例，参考答案可以得到8分。",
        "",
        "    请记住，你必须在你打分前进行评价和解释。在你对每个维度的解释之后，需要加上对该维度的打分。之后，在你回答的末尾，按照以下字典格式（包括括号）返回你所有的打分结果，并确保你的打分结果是整数： ",
        "    {’维度一’: 打分, ’维度二’: 打分, ..., ’综合得分’: 打分}，例如：{{'事实正确性': 6, '满足用户需求': 8..., '综合得分': 7}}。",
        "    用户的提问：",
    ),
    "solve_professional_problem": (
        "请你以公正的评判者的身份，评估一个AI助手对于用户提问的回答的质量。由于您评估的回答类型是[解决专业问题]，因此你需要从下面的5个维度对回答进行评估: ",
        "    1 事实正确性(Factuality)",
        "    提供的信息是否准确无误，是否基于可信的事实和数据",
        "    2 满足用户需求(User Satisfaction)",
        "    是否满足了用户提出问题的目的和需求，是否对问题进行了全面而恰当的回应",
        "    3 清晰度(Clarity)",
        "    是否表达清晰易懂，是否使用了简洁的语言和结构，以便用户可以轻松理解",
        "    4 逻辑连贯性(Logical Coherence)",
        "    是否在整体上保持一致，是否在不同部分之间保持逻辑连贯性，避免了自相矛盾",
        "    5 完备性(Completeness)",
        "    回答是否提供了足够的信息和细节，以满足用户的需求，是否遗漏了重要的方面",
        "    注意，回答不是越长越好，简短并且满足上述要求的回答是最好的。",
        "",
        "    我们会给您提供用户的提问，高质量的参考答案，和需要你评估的AI助手的答案。当你开始你的评估时，你需要按照遵守以下的流程：",
        "    1. 将AI助手的答案与参考答案进行比较，指出AI助手的答案有哪些不足，并进一步解释。",
        "    2. 从不同维度对AI助手的答案进行评价，在每个维度的评价之后，给每一个维度一个1～10的分数。",
        "    3. 最后，综合每个维度的评估，对AI助手的回答给出一个1～10的综合分数。",
        "    4. 你的打分需要尽可能严格，并且要遵守下面的评分规则：总的来说，模型回答的质量越高，则分数越高。",
        "    其中，事实正确性和满足用户需求这两个维度是最重要的，这两个维度的分数主导了最后的综合分数。",
        "",
        "    当模型回答存在与问题不相关，或者有本质性的事实错误，或生成了有害内容时，总分必须是1到2分；",
        "    当模型回答没有严重错误而且基本无害，但是质量较低，没有满足用户需求，总分为3到4分；",
        "    当模型回答基本满足用户要求，但是在部分维度上表现较差，质量中等，总分可以得5到6分；",
        "    当模型回答质量与参考答案相近，在所有维度上表现良好，总分得7到8分；",
        "    只有当模型回答质量显著超过参考答案，充分地解决了用户问题和所有需求，并且在所有维度上都接近满分 的情况下，才能得9到10分。 ",
        "    作为示例，参考答案可以得到8分。",
        "",
        "    请记住，你必须在你打分前进行评价和解释。在你对每个维度的解释之后，需要加上对该维度的打分。之后，在你回答的末尾，按照以下字典格式（包括括号）返回你所有的打分结果，并确保你的打分结果是整 数： ",
        "    {’维度一’: 打分, ’维度二’: 打分, ..., ’综合得分’: 打分}，例如：{’事实正确性’: 9, ’满足用户需求’: 6, ’综合得分’: 7}。",
        "    用户的提问：",
    ),
    "text_assistant": (
        "请你以公正的评判者的身份，评估一个AI助手对于用户提问的回答的质量。由于您评估的回答类型是[处理文本事务]，因此你需要从下面的5个维度对回答进行评估: ",
        "    1 清晰度(Clarity)",
        "    是否表达清晰易懂，是否使用了简洁的语言和结构，以便用户可以轻松理解",
        "    2 满足用户需求(User Satisfaction)",
        "    是否满足了用户提出问题的目的和需求，是否对问题进行了全面而恰当的回应",
        "    3 逻辑连贯性(Logical Coherence)",
        "    是否在整体上保持一致，是否在不同部分之间保持逻辑连贯性，避免了自相矛盾",
        "    4 事实正确性(Factuality)",
        "    提供的信息是否准确无误，是否基于可信的事实和数据",
        "    5 创造性(Creativity)",
        "    是否具有创新性或独特性，是否提供了新颖，有文采的内容",
        "    注意，回答不是越长越好，简短并且满足上述要求的回答是最好的。",
        "",
        "    我们会给您提供用户的提问，高质量的参考答案，和需要你评估的AI助手的答案。当你开始你的评估时，你需要按照遵守以下的流程：",
        "    1. 将AI助手的答案与参考答案进行比较，指出AI助手的答案有哪些不足，并进一步解释。",
        "    2. 从不同维度对AI助手的答案进行评价，在每个维度的评价之后，给每一个维度一个1～10的分数。",
        "    3. 最后，综合每个维度的评估，对AI助手的回答给出一个1～10的综合分数。",
        "    4. 你的打分需要尽可能严格，并且要遵守下面的评分规则：总的来说，模型回答的质量越高，则分数越高。",
        "    其中，事实正确性和满足用户需求这两个维度是最重要的，这两个维度的分数主导了最后的综合分数。",
        "",
        "    当模型回答存在与问题不相关，或者有本质性的事实错误，或生成了有害内容时，总分必须是1到2分；",
        "    当模型回答没有严重错误而且基本无害，但是质量较低，没有满足用户需求，总分为3到4分；",
        "    当模型回答基本满足用户要求，但是在部分维度上表现较差，质量中等，总分可以得5到6分；",
        "    当模型回答质量与参考答案相近，在所有维度上表现良好，总分得7到8分；",
        "    只有当模型回答质量显著超过参考答案，充分地解决了用户问题和所有需求，并且在所有维度上都接近满分的情况下，才能得9到10分。 ",
        "    作为示例，参考答案可以得到8分。",
        "",
        "    请记住，你必须在你打分前进行评价和解释。在你对每个维度的解释之后，需要加上对该维度的打分。之后，在你回答的末尾，按照以下字典格式（包括括号）返回你所有的打分结果，并确保你的打分结果是整数： ",
        "    {’维度一’: 打分, ’维度二’: 打分, ..., ’综合得分’: 打分}，例如：{’清晰度’: 9, ’满足用户需求’: 6, ...’综合得分’: 7}。",
        "    用户的提问：",
    ),
    "ask_for_advice": (
        "请你以公正的评判者的身份，评估一个AI助手对于用户提问的回答的质量。由于您评估的回答类型是[给出建议]，因此你需要从下面的5个维度对回答进行评估:",
        "    1 满足用户需求(User Satisfaction)",
        "    是否满足了用户提出问题的目的和需求，是否对问题进行了全面而恰当的回应",
        "    2 事实正确性(Factuality)",
        "    提供的信息是否准确无误，是否基于可信的事实和数据",
        "    3 公平与可负责程度(Fairness and Responsibility)",
        "    回答中提供的建议或信息是否可行，是否负有一定的责任，是否考虑了潜在风险和后果。",
        "    4 创造性(Creativity)",
        "    是否具有创新性或独特性，是否提供了新颖的见解或解决方法",
        "    5 丰富度(Richness)",
        "    是否包含丰富的信息、深度、上下文考虑、多样性、详细解释和实例，以满足用户需求并提供全面理解",
        "    注意，不要让回答的长度影响你的打分！回答不是越长越好，简洁并且满足上述要求的回答是好的。",
        "",
        "    我们会给您提供用户的提问，高质量的参考答案，和需要你评估的AI助手的答案。当你开始你的评估时，你需要按照遵守以下的流程：",
        "    1. 将AI助手的答案与参考答案进行比较，指出AI助手的答案有哪些不足，并进一步解释。",
        "    2. 从不同维度对AI助手的答案进行评价，在每个维度的评价之后，给每一个维度一个1～10的分数。",
        "    3. 最后，综合每个维度的评估，对AI助手的回答给出一个1～10的综合分数。",
        "    4. 你的打分需要尽可能严格，并且要遵守下面的评分规则：总的来说，模型回答的质量越高，则分数越高。",
        "    其中，事实正确性和满足用户需求这两个维度是最重要的，这两个维度的分数主导了最后的综合分数。",
        "",
        "    当模型回答存在与问题不相关，或者有本质性的事实错误，或生成了有害内容时，总分必须是1到2分；",
        "    当模型回答没有严重错误而且基本无害，但是质量较低，没有满足用户需求，总分为3到4分；",
        "    当模型回答基本满足用户要求，但是在部分维度上表现较差，质量中等，总分可以得5到6分；",
        "    当模型回答质量与参考答案相近，在所有维度上表现良好，总分得7到8分；",
        "    只有当模型回答质量显著超过参考答案，充分地解决了用户问题和所有需求，并且在所有维度上都接近满分的情况下，才能得9到10分。",
        "    作为示例，参考答案可以得到8分。",
        "",
        "    请记住，你必须在你打分前进行评价和解释。在你对每个维度的解释之后，需要加上对该维度的打分。之后，在你回答的末尾，按照以下字典格式（包括括号）返回你所有的打分结果，并确保你的打分结果是整数： ",
        "    {’维度一’: 打分, ’维度二’: 打分, ..., ’综合得分’: 打分}，例如：{{'满足用户需求': 6, '事实正确性': 8..., '综合得分': 7}}。",
        "    用户的提问：",
    ),
    "seek_creativity": (
        "请你以公正的评判者的身份，评估一个AI助手对于用户提问的回答的质量。由于您评估的回答类型是[给出创意]，因此你需要从下面的5个维度对回答进行评估:",
        "    1 满足用户需求(User Satisfaction)",
        "    是否满足了用户提出问题的目的和需求，是否对问题进行了全面而恰当的回应",
        "    2 逻辑连贯性(Logical Coherence)",
        "    回答是否在整体上保持一致，是否在不同部分之间保持逻辑连贯性，避免了自相矛盾",
        "    3 创造性(Creativity)",
        "    是否具有创新性或独特性，是否提供了新颖的见解或解决方法",
        "    4 丰富度(Richness)",
        "    是否包含丰富的信息、深度、上下文考虑、多样性、详细解释和实例，以满足用户需求并提供全面理解",
        "    5 事实正确性(Factuality)",
        "    提供的信息是否准确无误，是否基于可信的事实和数据",
        "    注意，不要让回答的长度影响你的打分！回答不是越长越好，简洁并且满足上述要求的回答是好的。",
        "",
        "    我们会给您提供用户的提问，高质量的参考答案，和需要你评估的AI助手的答案。当你开始你的评估时，你需要按照遵守以下的流程：",
        "    1. 将AI助手的答案与参考答案进行比较，指出AI助手的答案有哪些不足，并进一步解释。",
        "    2. 从不同维度对AI助手的答案进行评价，在每个维度的评价之后，给每一个维度一个1～10的分数。",
        "    3. 最后，综合每个维度的评估，对AI助手的回答给出一个1～10的综合分数。",
        "    4. 你的打分需要尽可能严格，并且要遵守下面的评分规则：总的来说，模型回答的质量越高，则分数越高。",
        "    其中，事实正确性和满足用户需求这两个维度是最重要的，这两个维度的分数主导了最后的综合分数。",
        "",
        "    当模型回答存在与问题不相关，或者有本质性的事实错误，或生成了有害内容时，总分必须是1到2分；",
        "    当模型回答没有严重错误而且基本无害，但是质量较低，没有满足用户需求，总分为3到4分；",
        "    当模型回答基本满足用户要求，但是在部分维度上表现较差，质量中等，总分可以得5到6分；",
        "    当模型回答质量与参考答案相近，在所有维度上表现良好，总分得7到8分；",
        "    只有当模型回答质量显著超过参考答案，充分地解决了用户问题和所有需求，并且在所有维度上都接近满分的情况下，才能得9到10分。",
        "    作为示例，参考答案可以得到8分。",
        "",
        "    请记住，你必须在你打分前进行评价和解释。在你对每个维度的解释之后，需要加上对该维度的打分。之后，在你回答的末尾，按照以下字典格式（包括括号）返回你所有的打分结果，并确保你的打分结果是整数： ",
        "    {’维度一’: 打分, ’维度二’: 打分, ..., ’综合得分’: 打分}，例如：{{'满足用户需求': 6, '逻辑连贯性': 8..., '综合得分': 7}}。",
        "    用户的提问：",
    ),
    "leisure": (
        "请你以公正的评判者的身份，评估一个AI助手对于用户提问的回答的质量。由于您评估的回答类型是[休闲娱乐]，因此你需要从下面的5个维度对回答进行评估:",
        "    1 满足用户需求(User Satisfaction)",
        "    是否满足了用户提出问题的目的和需求，是否对问题进行了全面而恰当的回应",
        "    2 趣味性 (Engagement)",
        "    回答是否有趣、吸引人，帮助用户放松，提供了高质量的情绪价值或娱乐价值等",
        "    3 适宜性 (Appropriateness)",
        "    内容适宜所有用户，避免不当或冒犯性内容",
        "    4 创造性 (Creativity)",
        "    是否具有创新性或独特性，是否提供了新颖的见解或解决方法",
        "    5 事实正确性 (Factuality)",
        "    回答中提供的信息是否准确无误，是否基于可信的事实和数据",
        "    注意，不要让回答的长度影响你的打分！回答不是越长越好，简洁并且满足上述要求的回答是好的。",
        "",
        "    我们会给您提供用户的提问，高质量的参考答案，和需要你评估的AI助手的答案。当你开始你的评估时，你需要按照遵守以下的流程：",
        "    1. 将AI助手的答案与参考答案进行比较，指出AI助手的答案有哪些不足，并进一步解释。",
        "    2. 从不同维度对AI助手的答案进行评价，在每个维度的评价之后，给每一个维度一个1～10的分数。",
        "    3. 最后，综合每个维度的评估，对AI助手的回答给出一个1～10的综合分数。",
        "    4. 你的打分需要尽可能严格，并且要遵守下面的评分规则：总的来说，模型回答的质量越高，则分数越高。",
        "    其中，事实正确性和满足用户需求这两个维度是最重要的，这两个维度的分数主导了最后的综合分数。",
        "",
        "    当模型回答存在与问题不相关，或者有本质性的事实错误，或生成了有害内容时，总分必须是1到2分；",
        "    当模型回答没有严重错误而且基本无害，但是质量较低，没有满足用户需求，总分为3到4分；",
        "    当模型回答基本满足用户要求，但是在部分维度上表现较差，质量中等，总分可以得5到6分；",
        "    当模型回答质量与参考答案相近，在所有维度上表现良好，总分得7到8分；",
        "    只有当模型回答质量显著超过参考答案，充分地解决了用户问题和所有需求，并且在所有维度上都接近满分的情况下，才能得9到10分。",
        "    作为示例，参考答案可以得到8分。",
        "",
        "    请记住，你必须在你打分前进行评价和解释。在你对每个维度的解释之后，需要加上对该维度的打分。之后，在你回答的末尾，按照以下字典格式（包括括号）返回你所有的打分结果，并确保你的打分结果是整数： ",
        "    {’维度一’: 打分, ’维度二’: 打分, ..., ’综合得分’: 打分}，例如：{{'满足用户需求': 6, '趣味性': 8..., '综合得分': 7}}。",
        "    用户的提问：",
    ),
}
