"""Answers and questions as safe HTML: markdown rendered, then sanitised with nh3.

Images are dropped: a remote image would load from a third party (and could tell
it who is annotating); links keep rel="noopener noreferrer" from nh3.
"""

import markdown
import nh3

ALLOWED_TAGS = set(nh3.ALLOWED_TAGS) - {"img"}


def render_markdown(text: str) -> str:
    """Untrusted markdown to HTML that is safe to mark safe in a template."""
    html = markdown.markdown(text or "", extensions=["fenced_code", "tables", "sane_lists"], output_format="html")
    return nh3.clean(html, tags=ALLOWED_TAGS)
