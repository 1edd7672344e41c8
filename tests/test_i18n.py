"""Every page switches between English and Simplified Chinese, and the choice is remembered."""

import pytest
from django.conf import settings
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_language_switch_renders_chinese_and_is_remembered(client):
    page = client.get(reverse("login"))
    assert '<html lang="en">' in page.text
    assert "Log in" in page.text

    response = client.post(reverse("set_language"), {"language": "zh-hans", "next": reverse("login")})
    assert response.status_code == 302 and response["Location"] == reverse("login")
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"

    page = client.get(reverse("login"))
    assert '<html lang="zh-hans">' in page.text
    assert "登录" in page.text
    assert "用户名" in page.text and "密码" in page.text
    assert "Log in" not in page.text


def test_browser_language_preselects_chinese(client):
    page = client.get(reverse("login"), headers={"Accept-Language": "zh-CN,zh;q=0.9"})
    assert '<html lang="zh-hans">' in page.text


def test_dashboard_in_chinese(client, researcher):
    client.force_login(researcher)
    client.post(reverse("set_language"), {"language": "zh-hans"})
    page = client.get(reverse("dashboard"))
    assert "研究者面板" in page.text
    assert "Researcher dashboard" not in page.text


def test_unknown_language_changes_nothing(client):
    response = client.post(reverse("set_language"), {"language": "xx", "next": reverse("login")})
    assert settings.LANGUAGE_COOKIE_NAME not in response.cookies
    assert '<html lang="en">' in client.get(reverse("login")).text
