"""Strings Django translates for every form, named here so `make messages` keeps them in the
project catalogue (locale/), which takes precedence over Django's own. In Chinese a label gets
the full-width colon, and none after a label that already ends in a full-width mark: without
this a Chinese label ending in "？" or "。" was followed by a second mark, "？:".
"""

from django.utils.translation import gettext_noop

# Translators: added after a form field's label; the full-width colon in Chinese.
LABEL_SUFFIX = gettext_noop(":")
# Translators: a label ending in one of these characters gets no suffix; add the full-width marks.
LABEL_ENDINGS = gettext_noop(":?.!")
# Translators: between a label and its value in running text ("Service: ChatGPT").
LABEL_SEPARATOR = gettext_noop(": ")
