"""Numbers that are not whole numbers in range are a 400 naming the parameter, never a 500:
`submission=²` on the withdraw form, and a 20-digit `limit` or `offset` on every list API."""

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from curation.models import Submission
from tests.curation.study_helpers import small_study  # noqa: F401
from tests.factories import SubmissionFactory, UserFactory

pytestmark = pytest.mark.django_db

HUGE = "9" * 20


def api_routes_without_arguments():
    """Every API route that takes no argument in its path: (name, path)."""
    found = []

    def walk(patterns, prefix):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern) and pattern.name and "<" not in str(pattern.pattern):
                found.append((pattern.name, "/" + prefix + str(pattern.pattern)))

    walk(get_resolver().url_patterns, "")
    return [(name, path) for name, path in found if path.startswith("/api/")]


@pytest.mark.parametrize("value", ["²", HUGE, "-1", "1.5"])
def test_a_bad_submission_number_on_the_withdraw_form_is_a_400(client, researcher, small_study, value):
    SubmissionFactory(study=small_study)
    client.force_login(researcher)
    response = client.post(reverse("curation:study-withdraw", args=["small"]), {"confirm": "1", "submission": value})
    assert response.status_code == 400
    assert "submission must be a whole number" in response.text
    assert Submission.objects.count() == 1


def test_every_list_api_refuses_a_huge_limit_or_offset_with_a_400(client):
    client.force_login(UserFactory(username="boss", is_superuser=True, roles=["researcher"]))
    listed = []
    for name, path in api_routes_without_arguments():
        plain = client.get(path)
        json = plain.status_code == 200 and plain["Content-Type"].startswith("application/json")
        if not json or "results" not in plain.json():
            continue
        listed.append(name)
        for parameter in ("limit", "offset"):
            for value in (HUGE, "²", "-3"):
                response = client.get(path, {parameter: value})
                assert response.status_code == 400, (name, parameter, value, response.status_code)
                assert parameter in response.json()["detail"]
        assert client.get(path, {"limit": "1000", "offset": "0"}).status_code == 200
        assert client.get(path, {"limit": "1001"}).status_code == 400
    assert {"api-studies", "api-datasets", "api-runs", "api-campaigns"} <= set(listed), listed
