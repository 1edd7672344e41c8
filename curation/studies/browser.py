"""What a participant's browser holds of a study: the submission its session is bound to, those
it held before another Prolific ID took their place, and whether a navigation came from here."""

from urllib.parse import urlsplit

from django.http import HttpRequest

from curation.models import Submission

SESSION_KEY = "study_submissions"
# Submissions this browser held before another Prolific ID took its place, per study: it may
# open them again when their own Prolific ID comes back (the same browser started them).
HELD_BEFORE_KEY = "study_submissions_before"
MAX_HELD_BEFORE = 10


def remember(request: HttpRequest, submission: Submission) -> None:
    """Bind the submission to this browser under a new session key: a key someone planted or
    read before (a shared computer, a fixed cookie) opens nothing bound after it. The one it
    held before is kept among those it held (HELD_BEFORE_KEY)."""
    slug = submission.study.slug
    held = dict(request.session.get(SESSION_KEY, {}))
    before = dict(request.session.get(HELD_BEFORE_KEY, {}))
    if held.get(slug) and held[slug] != submission.pk:
        before[slug] = [pk for pk in before.get(slug, []) if pk != held[slug]][-(MAX_HELD_BEFORE - 1) :] + [held[slug]]
    held[slug] = submission.pk
    request.session.cycle_key()
    request.session[SESSION_KEY] = held
    request.session[HELD_BEFORE_KEY] = before


def cross_site(request: HttpRequest) -> bool:
    """True unless the browser says the navigation began here or with the person themselves
    (typed, pasted, a bookmark): Sec-Fetch-Site `same-origin` or `none`; without that header
    (older browsers), a Referer from this site. A page elsewhere that sends a browser to a link
    is cross-site, and so is any request that says nothing."""
    site = request.META.get("HTTP_SEC_FETCH_SITE")
    if site is not None:
        return site not in {"same-origin", "none"}
    referer = urlsplit(request.META.get("HTTP_REFERER", ""))
    return f"{referer.scheme}://{referer.netloc}" != f"{request.scheme}://{request.get_host()}"
