"""The participant's questionnaire at /study/<slug>/ (researchers' pages: study_research_views).

Participants are anonymous. Their answers open only in the browser that started them (the
session holds the submission id) or through their private resume link, which every page
shows. A Prolific ID is no credential: anyone can type one into the study link, so opening
the link with the ID of a submission held elsewhere shows none of its answers, only how to
continue there, and lets this browser start a submission of its own. Every page saves to
the database, and a language switch first stores what is typed on the page as a draft.
"""

import re
from functools import wraps
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache

from core.throttling import rate_limited
from curation.models import Study, StudyStep, Submission
from curation.pii.entities import entity_label
from curation.pii.hints import quick_personal_info
from curation.studies import services
from curation.studies.browser import HELD_BEFORE_KEY, SESSION_KEY, cross_site, remember
from curation.studies.forms import (
    FREQUENCY_CHOICES,
    NOT_USED,
    SATISFACTION_CHOICES,
    AboutForm,
    CaseForm,
    ConsentForm,
    ParticipantForm,
    UsageForm,
    service_label,
)
from curation.studies.geo import country_from_address
from curation.studies.selectors import (
    prolific_pid_state,
    submission_cases,
    submission_for_resume_token,
    submission_for_session,
    submission_held_before,
)

PROLIFIC_PARAMS = {"PROLIFIC_PID": "prolific_pid", "STUDY_ID": "prolific_study_id", "SESSION_ID": "prolific_session_id"}
LANGUAGE_CODES = {code for code, _name in settings.LANGUAGES}
PROLIFIC_COMPLETE = "https://app.prolific.com/submissions/complete?"
PROLIFIC_HOME = "https://app.prolific.com/"
STEP_URLS: dict[str, str] = {
    StudyStep.CASES: "curation:study-cases",
    StudyStep.ABOUT: "curation:study-about",
    StudyStep.USAGE: "curation:study-usage",
    StudyStep.REVIEW: "curation:study-review",
    StudyStep.DONE: "curation:study-done",
}


def _with_language(response, code: str):
    """Remember the language in its cookie, as Django's set_language does; the redirect shows it."""
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME,
        code,
        max_age=settings.LANGUAGE_COOKIE_AGE,
        samesite=settings.LANGUAGE_COOKIE_SAMESITE,
        secure=settings.LANGUAGE_COOKIE_SECURE,
        httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
    )
    return response


def _step_redirect(submission: Submission):
    if submission.status == Submission.Status.SUBMITTED:
        return redirect("curation:study-done", slug=submission.study.slug)
    return redirect(STEP_URLS.get(submission.current_step, "curation:study-cases"), slug=submission.study.slug)


def _message_page(request: HttpRequest, study, title, text, status=200):
    context = {**_texts(request, study), "title": title, "page_title": title, "text": text}
    return render(request, "curation/study/message.html", context, status=status)


def participant_page(page: str, draft: str = ""):
    """Load the study and this session's submission; handle a language switch with a draft.

    A session without a submission goes back to the start page; a finished one to the
    thank-you page. A POST carrying `_language` (sent by the header switcher through
    study.js) stores the page's input unvalidated and shows the page again.
    """

    def decorator(view):
        @wraps(view)
        @never_cache
        @rate_limited("study_write")
        def wrapped(request, slug, *args, **kwargs):
            study = get_object_or_404(Study, slug=slug)
            if study.archived_at is not None and page != StudyStep.DONE:
                return _study_ended(request, study)
            submission_id = request.session.get(SESSION_KEY, {}).get(slug)
            submission = submission_for_session(study=study, submission_id=submission_id)
            if submission is None:
                return redirect("curation:study-start", slug=slug)
            if submission.status == Submission.Status.SUBMITTED and page != StudyStep.DONE:
                return redirect("curation:study-done", slug=slug)
            if submission.status == Submission.Status.IN_PROGRESS and submission.excluded:
                return _closed_by_researchers(request, study)
            language = request.POST.get("_language")
            if request.method == "POST" and language in LANGUAGE_CODES:
                draft_key = kwargs.get("draft_key") or draft or page
                data = {
                    key: request.POST.getlist(key)
                    for key in request.POST
                    if key not in {"csrfmiddlewaretoken", "_language", "action"}
                }
                services.submission_draft_save(
                    submission=submission,
                    page=draft_key,
                    data=data,
                    language=language,
                    fields=_draft_fields(study, draft_key),
                )
                return _with_language(HttpResponseRedirect(request.path), language)
            kwargs.pop("draft_key", None)
            return view(request, study, submission, *args, **kwargs)

        return wrapped

    return decorator


# Longest value a choice field of a draft keeps (service names, intents, ratings).
MAX_CHOICE_CHARS = 200


def _draft_fields(study: Study, key: str) -> dict[str, int] | None:
    """The fields (and their longest values) a page's draft may hold; None for no such page."""
    case = re.fullmatch(r"case-(?:new|(\d+))", key)
    form: ParticipantForm
    if case and (case.group(1) is None or 1 <= int(case.group(1)) <= study.max_cases):
        form = CaseForm(study=study)
    elif key == StudyStep.ABOUT:
        form = AboutForm(study=study)
    elif key == StudyStep.USAGE:
        form = UsageForm(study=study)
    else:
        return None
    return {name: _draft_chars(field) for name, field in form.fields.items()}


def _draft_chars(field) -> int:
    """A text with a length limit keeps twice that in a draft: an over-long paste survives a
    language switch whole, and the page then says it is too long instead of cutting it."""
    if limit := getattr(field, "limit", None):
        return 2 * limit
    return getattr(field, "max_length", None) or MAX_CHOICE_CHARS


def _draft_initial(submission: Submission, key: str, multiple=frozenset({"llms_used"})) -> dict | None:
    draft = submission.drafts.get(key)
    if draft is None:
        return None
    return {name: values if name in multiple else (values[-1] if values else "") for name, values in draft.items()}


def _texts(request: HttpRequest, study: Study) -> dict:
    language = request.LANGUAGE_CODE
    return {
        "study": study,
        "language": language,
        "study_texts": {
            "title": study.title(language),
            "consent": study.consent(language),
            "instructions": study.instructions(language),
        },
    }


def _context(request: HttpRequest, study, submission, step, **extra):
    reached = services.STEP_ORDER.index(submission.current_step)
    steps = []
    for value, label in StudyStep.choices:
        if value in {StudyStep.CONSENT, StudyStep.DONE}:
            continue
        reachable = services.STEP_ORDER.index(value) <= reached
        steps.append((value, label, reverse(STEP_URLS[value], args=[study.slug]) if reachable else ""))
    return {
        **_texts(request, study),
        "submission": submission,
        "step": step,
        "steps": steps,
        "page_title": StudyStep(step).label,
        "resume_url": resume_url(request, study, submission),
        **extra,
    }


def resume_url(request: HttpRequest, study: Study, submission: Submission) -> str:
    """The private link back to a submission, from any browser. The token rides in the query
    string, which the recommended access log leaves out (README, "Deployment")."""
    path = reverse("curation:study-resume", args=[study.slug])
    return request.build_absolute_uri(f"{path}?{urlencode({'token': submission.resume_token})}")


@never_cache
@rate_limited("study_start")
def study_start(request: HttpRequest, slug: str) -> HttpResponse:
    """The study link: consent for newcomers, back to their page for returning participants."""
    study = get_object_or_404(Study, slug=slug)
    lang = request.GET.get("lang", "").lower()
    if lang in LANGUAGE_CODES:
        # Drop `lang` from the address so a later switch in the header is not undone by it.
        query = request.GET.copy()
        del query["lang"]
        target = request.path + (f"?{query.urlencode()}" if query else "")
        return _with_language(HttpResponseRedirect(target), lang)
    if study.archived_at is not None:
        return _study_ended(request, study)

    prolific = {field: request.GET.get(param, "").strip()[:64] for param, field in PROLIFIC_PARAMS.items()}
    pid = prolific["prolific_pid"]
    own = submission_for_session(study=study, submission_id=request.session.get(SESSION_KEY, {}).get(slug))
    if own is not None and (not pid or own.prolific_pid == pid):
        return _step_redirect(own)
    switching = own is not None and request.method == "POST" and request.POST.get("switch") == "yes"
    if own is not None and not switching:
        # Another Prolific ID in a browser that holds a questionnaire: nothing changes hands
        # until the person says so (the browser may be shared, or the link typed wrong).
        return render(
            request,
            "curation/study/switch_confirm.html",
            {**_texts(request, study), "page_title": _("Another Prolific ID in this browser"), "own": own, "pid": pid},
        )
    if switching:
        before = request.session.get(HELD_BEFORE_KEY, {}).get(slug, [])
        again = submission_held_before(study=study, prolific_pid=pid, submission_ids=before)
        if again is not None:
            remember(request, again)
            return _step_redirect(again)
    # This browser holds nothing under this Prolific ID: the ID alone opens no answers.
    finished, elsewhere = prolific_pid_state(study=study, prolific_pid=pid)
    if finished is not None:
        return _already_finished(request, study, finished)
    if not study.is_open:
        return _message_page(
            request,
            study,
            _("This study is closed"),
            _("This study takes no new participants. Thank you for your interest."),
        )

    # The confirmation of a switch (its own form, without the consent box) shows the consent.
    consenting = request.method == "POST" and request.POST.get("step") != "switch"
    form = ConsentForm(request.POST if consenting else None)
    if consenting and form.is_valid():
        try:
            submission = services.submission_start(
                study=study,
                language=request.LANGUAGE_CODE,
                country_hint=country_from_address(request.META.get("REMOTE_ADDR", "")),
                filled_by=request.user,
                **prolific,
            )
        except services.AlreadyFinished:
            return _already_finished(request, study, prolific_pid_state(study=study, prolific_pid=pid)[0])
        except services.StudyError as error:
            return _message_page(request, study, _("This study is closed"), " ".join(error.messages))
        remember(request, submission)
        return _step_redirect(submission)
    return render(
        request,
        "curation/study/consent.html",
        {
            **_texts(request, study),
            "form": form,
            "page_title": StudyStep.CONSENT.label,
            "elsewhere": elsewhere,
            "switching": switching,
        },
    )


def _already_finished(request: HttpRequest, study, finished: Submission | None):
    """The completion code the finished submission earned, and nothing else of it."""
    code = ""
    if finished is not None:
        code = study.screenout_code if finished.excluded else study.completion_code
    context = {
        **_texts(request, study),
        "title": _("You have already taken part"),
        "page_title": _("You have already taken part"),
        "text": _(
            "Our records show you have already completed this study. Thank you! Each person can take part only once."
        ),
        "code": code,
    }
    return render(request, "curation/study/message.html", context)


def _study_ended(request: HttpRequest, study):
    """An archived study's pages (a finished participant still reads their code on the last one)."""
    text = _("This study is no longer available and takes no more answers. Thank you for your interest.")
    return _message_page(request, study, _("This study has ended"), text, status=410)


def _closed_by_researchers(request: HttpRequest, study):
    return _message_page(
        request,
        study,
        _("This questionnaire has been closed"),
        _(
            "Another submission under your Prolific ID is the one the researchers kept, so this one takes no more "
            "answers. Thank you for your time."
        ),
    )


@never_cache
@rate_limited("study_resume", methods=("GET", "POST"))
def study_resume(request: HttpRequest, slug: str) -> HttpResponse:
    """A private resume link: binds this browser to the submission and returns to its page.

    The token comes in the query string (`?token=`), or in the form of the confirmation page.
    Following the link binds at once only when it cannot take anything from the person: the
    navigation began on this site or with the person (see cross_site), and this browser holds
    no other submission of the study. Otherwise a page says what will happen and binds only when
    the person confirms (a POST, which a page elsewhere cannot make without the CSRF token): a
    site that sends a participant's browser to someone else's link would otherwise move them,
    unaware, onto a submission whose answers that someone reads."""
    study = get_object_or_404(Study, slug=slug)
    if study.archived_at is not None:
        return _study_ended(request, study)
    token = request.POST.get("token", "") if request.method == "POST" else request.GET.get("token", "")
    submission = submission_for_resume_token(study=study, token=token)
    if submission is None:
        raise Http404
    held = submission_for_session(study=study, submission_id=request.session.get(SESSION_KEY, {}).get(slug))
    if held is not None and held.pk == submission.pk:
        return _step_redirect(submission)
    confirmed = request.method == "POST" and request.POST.get("confirm") == "yes"
    if confirmed or (held is None and request.method == "GET" and not cross_site(request)):
        remember(request, submission)
        return _step_redirect(submission)
    context = {
        **_texts(request, study),
        "page_title": _("Continue a questionnaire?"),
        "token": token,
        "linked": submission,
        "linked_cases": submission.cases.count(),
        "held": held,
        "held_cases": held.cases.count() if held is not None else 0,
    }
    return render(request, "curation/study/resume_confirm.html", context)


def study_resume_old_link(request: HttpRequest, slug: str, token: str) -> HttpResponse:
    """Links handed out when the token was part of the path: the same link with the token in the
    query string (which the recommended access log leaves out; the path is masked there too)."""
    path = reverse("curation:study-resume", args=[slug])
    return HttpResponseRedirect(f"{path}?{urlencode({'token': token})}")


@participant_page(StudyStep.CASES, draft="case-new")
def study_cases(request: HttpRequest, study: Study, submission: Submission) -> HttpResponse:
    """The list of reported cases and a form to add one; Continue saves a filled form first."""
    cases = submission_cases(submission=submission)
    form = None
    if request.method == "POST":
        action = request.POST.get("action")
        typed = any((request.POST.get(name) or "").strip() for name in ("service", "conversation", "share_link"))
        saved = False
        if action == "add" or typed:
            form = CaseForm(request.POST, study=study)
            if form.is_valid():
                try:
                    case = services.case_save(submission=submission, values=form.case_values())
                except services.StudyError as error:
                    messages.error(request, " ".join(error.messages))
                else:
                    _warn_personal_info(request, case)
                    saved = True
                    form = None
                    if action == "add":
                        messages.success(request, _("Case saved."))
                        return redirect("curation:study-cases", slug=study.slug)
        if action == "continue" and (saved or not typed):
            try:
                services.submission_cases_confirm(submission=submission)
            except services.StudyError as error:
                messages.error(request, " ".join(error.messages))
            else:
                return redirect("curation:study-about", slug=study.slug)
        cases = submission_cases(submission=submission)
    can_add = len(cases) < study.max_cases
    if not can_add:
        form = None
    elif form is None:
        form = CaseForm(initial=_draft_initial(submission, "case-new"), study=study)
    return render(
        request,
        "curation/study/cases.html",
        _context(request, study, submission, StudyStep.CASES, cases=cases, form=form, can_add=can_add),
    )


def _list_separator() -> str:
    return "、" if get_language().startswith("zh") else ", "


def _warn_personal_info(request: HttpRequest, case) -> None:
    """A warning, never a refusal, when a saved case seems to hold an e-mail address, a phone
    number or an ID number: the participant decides (the review removes what is left)."""
    kinds = quick_personal_info(f"{case.conversation}\n{case.intent_other}")
    if not kinds:
        return
    separator = _list_separator()
    messages.warning(
        request,
        _(
            "Case %(number)d seems to contain personal information (%(kinds)s). Unless you are happy to share it, "
            "please edit the case and remove it; you may also leave it as it is."
        )
        % {"number": case.position, "kinds": separator.join(entity_label(kind) for kind in kinds)},
    )


def _case_edit_page(view):
    @wraps(view)
    def wrapped(request, slug, position):
        return participant_page(StudyStep.CASES)(view)(request, slug, position, draft_key=f"case-{position}")

    return wrapped


@_case_edit_page
def study_case_edit(request: HttpRequest, study: Study, submission: Submission, position: int) -> HttpResponse:
    """Change one reported case."""
    case = submission.cases.filter(position=position).first()
    if case is None:
        raise Http404
    if request.method == "POST":
        form = CaseForm(request.POST, study=study)
        if form.is_valid():
            try:
                saved = services.case_save(submission=submission, values=form.case_values(), position=position)
            except services.StudyError as error:
                messages.error(request, " ".join(error.messages))
            else:
                messages.success(request, _("Case saved."))
                _warn_personal_info(request, saved)
                return redirect("curation:study-cases", slug=study.slug)
    else:
        initial = _draft_initial(submission, f"case-{position}") or CaseForm.initial_from_case(case, study)
        form = CaseForm(initial=initial, study=study)
    return render(
        request,
        "curation/study/case_edit.html",
        _context(request, study, submission, StudyStep.CASES, case=case, form=form),
    )


@participant_page(StudyStep.CASES)
def study_case_remove(request: HttpRequest, study: Study, submission: Submission, position: int) -> HttpResponse:
    """Remove one case once the participant confirms. The list's Remove button asks in the
    browser (study.js) and sends confirm=yes; without JavaScript it leads here, to a page that
    asks, so a slip of the finger never deletes a case."""
    case = submission.cases.filter(position=position).first()
    if case is None:
        raise Http404
    if request.method == "POST" and request.POST.get("confirm") == "yes":
        try:
            services.case_remove(submission=submission, position=position)
        except services.StudyError as error:
            messages.error(request, " ".join(error.messages))
        else:
            messages.success(request, _("Case removed."))
        return redirect("curation:study-cases", slug=study.slug)
    if request.method == "POST":
        return redirect("curation:study-case-remove", slug=study.slug, position=position)
    return render(
        request,
        "curation/study/case_remove.html",
        _context(request, study, submission, StudyStep.CASES, case=case),
    )


def _needs(submission: Submission, step: StudyStep) -> bool:
    return services.STEP_ORDER.index(submission.current_step) < services.STEP_ORDER.index(step)


@participant_page(StudyStep.ABOUT)
def study_about(request: HttpRequest, study: Study, submission: Submission) -> HttpResponse:
    """Voluntary demographics."""
    if _needs(submission, StudyStep.ABOUT):
        return _step_redirect(submission)
    if request.method == "POST":
        form = AboutForm(request.POST, study=study)
        if form.is_valid():
            services.submission_about_save(submission=submission, values=form.about_values())
            return redirect("curation:study-usage", slug=study.slug)
    else:
        initial = _draft_initial(submission, StudyStep.ABOUT) or AboutForm.initial_from_submission(submission)
        form = AboutForm(initial=initial, study=study)
    return render(
        request, "curation/study/about.html", _context(request, study, submission, StudyStep.ABOUT, form=form)
    )


@participant_page(StudyStep.USAGE)
def study_usage(request: HttpRequest, study: Study, submission: Submission) -> HttpResponse:
    """LLMs used, frequency, and the satisfaction grid with its instructed item."""
    if _needs(submission, StudyStep.USAGE):
        return _step_redirect(submission)
    if request.method == "POST":
        form = UsageForm(request.POST, study=study)
        if form.is_valid():
            services.submission_usage_save(submission=submission, values=form.usage_values())
            return redirect("curation:study-review", slug=study.slug)
    else:
        initial = _draft_initial(submission, StudyStep.USAGE) or UsageForm.initial_from_usage(submission.usage)
        form = UsageForm(initial=initial, study=study)
    return render(
        request, "curation/study/usage.html", _context(request, study, submission, StudyStep.USAGE, form=form)
    )


@participant_page(StudyStep.REVIEW)
def study_review(request: HttpRequest, study: Study, submission: Submission) -> HttpResponse:
    """Everything answered, read back, and the submit button."""
    if _needs(submission, StudyStep.REVIEW):
        return _step_redirect(submission)
    if request.method == "POST":
        try:
            submission = services.submission_finish(submission=submission, language=request.LANGUAGE_CODE)
        except services.AlreadyFinished:
            # Another browser under the same Prolific ID finished first: show the code it earned.
            return _already_finished(
                request, study, prolific_pid_state(study=study, prolific_pid=submission.prolific_pid)[0]
            )
        except services.StudyError as error:
            messages.error(request, " ".join(error.messages))
        else:
            code = study.screenout_code if submission.excluded else study.completion_code
            if submission.prolific_pid and code:
                return redirect(PROLIFIC_COMPLETE + urlencode({"cc": code}))
            return redirect("curation:study-done", slug=study.slug)
    usage = submission.usage or {}
    grid = UsageForm(study=study)
    points = dict(SATISFACTION_CHOICES + [NOT_USED])
    ratings = [
        (grid[f"sat_{intent}"].label, points.get(str(rating), rating))
        for intent, rating in (usage.get("satisfaction") or {}).items()
        if f"sat_{intent}" in grid.fields
    ]
    return render(
        request,
        "curation/study/review.html",
        _context(
            request,
            study,
            submission,
            StudyStep.REVIEW,
            cases=submission_cases(submission=submission),
            llms_used=_list_separator().join(service_label(service) for service in usage.get("llms_used", [])),
            frequency=dict(FREQUENCY_CHOICES).get(usage.get("frequency", ""), ""),
            ratings=ratings,
        ),
    )


@participant_page(StudyStep.DONE)
def study_done(request: HttpRequest, study: Study, submission: Submission) -> HttpResponse:
    """Thank-you page with the completion (or screen-out) code."""
    if submission.status != Submission.Status.SUBMITTED:
        return _step_redirect(submission)
    code = study.screenout_code if submission.excluded else study.completion_code
    prolific_url = ""
    if submission.prolific_pid:
        # Without a code (a study saved before both were required) the way back is Prolific itself.
        prolific_url = PROLIFIC_COMPLETE + urlencode({"cc": code}) if code else PROLIFIC_HOME
    return render(
        request,
        "curation/study/done.html",
        {
            **_texts(request, study),
            "submission": submission,
            "screened_out": submission.excluded,
            "code": code,
            "prolific_url": prolific_url,
            "page_title": StudyStep.DONE.label,
        },
    )
