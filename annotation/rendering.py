"""Answers and questions as safe HTML: markdown rendered, then sanitised with nh3.

Images are dropped: a remote image would load from a third party (and could tell
it who is annotating); links keep rel="noopener noreferrer" from nh3.
"""

import threading
from functools import lru_cache

import markdown
import nh3

ALLOWED_TAGS = set(nh3.ALLOWED_TAGS) - {"img"}
EXTENSIONS = ["fenced_code", "tables", "sane_lists"]

# Building a Markdown converter (loading its extensions) costs more than converting a short
# answer, and every next-pair request converts three texts: keep one per thread (a converter
# is not thread-safe) and reset it between texts.
_local = threading.local()


def _converter() -> markdown.Markdown:
    converter = getattr(_local, "converter", None)
    if converter is None:
        converter = _local.converter = markdown.Markdown(extensions=EXTENSIONS, output_format="html")
    return converter


# Each answer is shown in several pairs and each pair to several annotators, and the result
# depends on the text alone: keep the latest few hundred (a few MB at most per process).
@lru_cache(maxsize=512)
def render_markdown(text: str) -> str:
    """Untrusted markdown to HTML that is safe to mark safe in a template."""
    html = _converter().reset().convert(text or "")
    return nh3.clean(html, tags=ALLOWED_TAGS)
