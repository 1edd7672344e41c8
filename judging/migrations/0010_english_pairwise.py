"""AlpacaEval's English pairwise prompt (`alpaca_eval_gpt4`) becomes a judge template, so that
English items of a pairwise run are judged with it and Chinese ones with ChineseAlpacaEval's.

The text is frozen here (a migration never reads live code); it equals
judging.prompts.texts.ALPACA_EVAL_GPT4_USER, which a test checks line for line against the
published file. A database that already holds this exact text under the name gets nothing new.
"""

from django.db import migrations

NAME = "alpacaeval/pairwise/en"
TEXT = (
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


def add_english_pairwise(apps, schema_editor):
    JudgeTemplate = apps.get_model("judging", "JudgeTemplate")
    newest = JudgeTemplate.objects.filter(name=NAME).order_by("-version").first()
    if newest is not None and newest.text == TEXT:
        return
    JudgeTemplate.objects.create(
        name=NAME, version=newest.version + 1 if newest else 1, mode="pairwise", language="en", text=TEXT
    )


def remove_english_pairwise(apps, schema_editor):
    """Undo: drop this version unless a run or judgment uses it."""
    JudgeTemplate = apps.get_model("judging", "JudgeTemplate")
    Judgment = apps.get_model("judging", "Judgment")
    used = set(Judgment.objects.exclude(template=None).values_list("template_id", flat=True))
    JudgeTemplate.objects.filter(name=NAME, text=TEXT, runs=None).exclude(pk__in=used).delete()


class Migration(migrations.Migration):
    dependencies = [("judging", "0009_answer_generations")]
    operations = [migrations.RunPython(add_english_pairwise, remove_english_pairwise)]
