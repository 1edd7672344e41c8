"""The OpenAPI schema is valid, and the interactive docs work without any CDN."""

import re

import pytest
from django.core.management import call_command
from django.urls import reverse


def test_schema_validates_without_warnings(tmp_path):
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    text = out.read_text()
    for path in ("/api/studies/", "/api/datasets/", "/api/runs/", "/api/campaigns/", "/api/me/"):
        assert path in text


@pytest.mark.django_db
def test_docs_load_only_local_assets(client, researcher):
    client.force_login(researcher)
    page = client.get(reverse("api-docs"))
    assert page.status_code == 200
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert sources, "the docs page should reference its assets"
    assert all(not s.startswith(("http://", "https://", "//")) for s in sources), sources
    assert "cdn" not in page.text.lower()
    schema = client.get(reverse("api-schema"))
    assert schema.status_code == 200
