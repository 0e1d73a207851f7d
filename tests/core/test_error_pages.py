"""Styled error pages that say what a person can do instead."""

import pytest
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_403_names_the_roles_that_may_open_the_page(browser_as):
    # An auditor may not add a vendor: procurement reviewers (and administrators) may.
    response = browser_as("aude").get(reverse("vendors:create"))
    assert response.status_code == 403
    text = response.content.decode()
    assert "This page is not open to you" in text
    assert "Procurement reviewer" in text and "Administrator" in text
    assert "Auditor" in text  # the viewer's own role
    assert reverse("approvals:dashboard") in text


def test_403_in_chinese(browser_as):
    client = browser_as("aude")
    client.cookies["django_language"] = "zh-hans"
    text = client.get(reverse("vendors:create"), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "此页面不对您开放" in text


def test_404_offers_a_way_on(browser_as):
    response = browser_as("priya").get("/no/such/page/")
    assert response.status_code == 404
    text = response.content.decode()
    assert "There is nothing at this address" in text
    assert reverse("cases:list") in text


def test_404_for_a_visitor_offers_sign_in():
    response = Client().get("/no/such/page/")
    assert response.status_code == 404
    assert reverse("login") in response.content.decode()


def test_500_page_stands_alone(settings):
    from django.template.loader import get_template

    html = get_template("500.html").render({})
    assert "Something went wrong" in html and "服务器出错了" in html
