"""Ordinary texts for the PII checks: what participants and judges write, with and without
personal information, in English and Chinese. tests/curation/pii_expected.json holds the hints
found in them before the checks were made linear; they must not change."""

import json
from pathlib import Path

from django.conf import settings

EXPECTED = Path(__file__).with_name("pii_expected.json")

HANDWRITTEN = [
    ("en", "Question: How do I write a cover letter?\nAnswer: Start with a short greeting, then say why you fit."),
    ("en", "Email me at jane.doe+work@example.co.uk or call +44 20 7946 0958 after 5pm."),
    ("en", "My number is (415) 555-0132 and my SSN is 078-05-1120; the server is 192.168.10.24."),
    ("en", "See https://www.example.com/path?q=1 and www.wikipedia.org, or docs.python.org/3/library/re.html."),
    ("en", "Use `pd.read_csv('a.csv')` then df.to_csv(path); import numpy.linalg as la"),
    ("en", "```python\nimport requests\nrequests.get('https://api.example.com/v1')\n```\nThen open example.org."),
    ("en", "Pay with card 4111 1111 1111 1111, IBAN GB82 WEST 1234 5698 7654 32, thanks."),
    ("en", "Visit site.com.cn/about or \"shop.example.net\" and 'http://a.b.io/x'. Also foo@bar"),
    ("en", "The meeting is at 10.30 on 12.05.2024; version 3.11.4 of python; e.g. i.e. etc."),
    ("en", "Contact: support@company.com, sales@company.com, +1-202-555-0173, +1 (202) 555-0199."),
    ("zh", "我的邮箱是ab@x.com，电话13812345678，身份证号11010519491231002X。"),
    ("zh", "请访问 www.baidu.com 或者 https://zhidao.baidu.com/question/123.html 查看。"),
    ("zh", "联系电话：+86 138 1234 5678，或者 010-62345678。地址在北京市海淀区。"),
    ("zh", "问题：怎么用 pandas 读取文件？\n回答：用 pd.read_csv('data.csv')，然后 df.head()。"),
    ("zh", "我的银行卡号是6222 0202 0000 1234 567，IP 是 10.0.0.1，网站 example.cn。"),
    ("en", "Line one with a.com\nprint(b.com)\nx = c.com\nplain d.com here and e.co"),
    ("en", "abc.def.ghi.jkl.mno.pqr.stu.vwx.yz.com and sub-domain.my-site.org/page."),
    ("en", "Numbers: 13812345678, 1234567, 12345678901234567890, 3.14159, 2001:db8::1"),
]


def demo_texts() -> list[tuple[str, str]]:
    """The conversations of the demo's cases."""
    rows = json.loads((Path(settings.BASE_DIR) / "fixtures" / "demo.json").read_text(encoding="utf-8"))
    texts = []
    for row in rows:
        if row["model"] == "curation.case":
            fields = row["fields"]
            language = "zh" if any("\u4e00" <= char <= "\u9fff" for char in fields["conversation"]) else "en"
            texts.append((language, fields["conversation"]))
    return texts


def corpus() -> list[tuple[str, str]]:
    return HANDWRITTEN + demo_texts()


def hints_of(text: str, language: str) -> dict:
    from curation.pii.hints import pii_hints, quick_personal_info

    return {
        "hints": [[h.entity, h.start, h.end, h.score] for h in pii_hints(text, language)],
        "quick": quick_personal_info(text),
    }
