"""The invitation's link and its one-time code, through the pages a vendor uses.

Li Wei of the vendor is invited by priya (procurement) to answer for one offer.
The link alone opens nothing: a code e-mailed to her address does, once.
"""

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from apps.portal import access
from apps.portal.models import InvitationUse, OneTimeCode, UseKind
from apps.portal.services.invitations import invitation_revoke
from tests.portal.factories import make_invitation, open_portal

pytestmark = pytest.mark.django_db


def _code(message) -> str:
    return re.search(r"\b(\d{6})\b", message.body).group(1)


def _send_code(client, token) -> str:
    mail.outbox.clear()
    response = client.post(reverse("portal:start", args=[token]), {"send": "1"})
    assert response.status_code == 302
    assert len(mail.outbox) == 1
    return _code(mail.outbox[0])


def test_the_invitation_e_mail_carries_the_link_and_nothing_stores_its_secret(priya):
    invitation, secret = make_invitation(priya)
    assert mail.outbox[0].to == ["li.wei@vendor.example"]
    assert access.portal_link(secret) in mail.outbox[0].body
    assert secret not in invitation.link_digest
    assert access.invitation_for_link(secret) == invitation
    assert list(invitation.uses.values_list("kind", flat=True)) == [UseKind.INVITED]


def test_the_link_asks_for_a_code_and_the_code_opens_it_once(client, priya):
    invitation, secret = make_invitation(priya)
    start = reverse("portal:start", args=[secret])
    home = reverse("portal:home", args=[secret])

    page = client.get(start)
    assert page.status_code == 200
    assert invitation.offer.vendor.name in page.text
    assert "li.wei@" not in page.text  # the address is masked
    assert client.get(home).url == start

    code = _send_code(client, secret)
    answer = client.post(start, {"code": code})
    assert answer.status_code == 302 and answer.url == home
    assert client.get(home).status_code == 200

    # The same code again, in another browser: used.
    other = client.__class__()
    assert other.post(start, {"code": code}).status_code == 400
    assert other.get(home).url == start
    kinds = list(invitation.uses.values_list("kind", flat=True))
    assert kinds == [UseKind.INVITED, UseKind.CODE_SENT, UseKind.SIGNED_IN, UseKind.CODE_REFUSED]


def test_five_wrong_tries_void_the_code(client, priya):
    invitation, secret = make_invitation(priya)
    start = reverse("portal:start", args=[secret])
    code = _send_code(client, secret)
    wrong = f"{(int(code) + 1) % 10**6:06d}"
    for _ in range(5):
        assert client.post(start, {"code": wrong}).status_code == 400
    assert client.post(start, {"code": code}).status_code == 400
    assert OneTimeCode.objects.get(invitation=invitation).used_at is not None


def test_a_code_expires(client, priya, settings):
    invitation, secret = make_invitation(priya)
    code = _send_code(client, secret)
    OneTimeCode.objects.filter(invitation=invitation).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert client.post(reverse("portal:start", args=[secret]), {"code": code}).status_code == 400


def test_a_new_code_voids_the_one_before(client, priya):
    _invitation, secret = make_invitation(priya)
    first = _send_code(client, secret)
    second = _send_code(client, secret)
    start = reverse("portal:start", args=[secret])
    if first != second:
        assert client.post(start, {"code": first}).status_code == 400
    assert client.post(start, {"code": second}).status_code == 302


def test_codes_are_rationed(client, priya):
    invitation, secret = make_invitation(priya)
    for _ in range(5):
        _send_code(client, secret)
    mail.outbox.clear()
    answer = client.post(reverse("portal:start", args=[secret]), {"send": "1"})
    assert answer.status_code == 429
    assert mail.outbox == []
    assert OneTimeCode.objects.filter(invitation=invitation).count() == 5


def test_a_link_that_names_nothing_is_404_and_says_nothing(client, priya):
    make_invitation(priya)
    for token in ("not-a-link", "x" * 500):
        page = client.get(reverse("portal:start", args=[token]))
        assert page.status_code == 404
        assert "Vendor" not in page.text.split("<main", 1)[1]


def test_an_expired_or_revoked_link_is_gone_even_for_an_open_session(client, priya):
    invitation, secret = make_invitation(priya)
    open_portal(client, invitation)
    home = reverse("portal:home", args=[secret])
    assert client.get(home).status_code == 200

    invitation_revoke(actor=priya, invitation=invitation, reason="Wrong contact")
    page = client.get(home)
    assert page.status_code == 410
    assert "withdrawn" in page.text
    assert invitation.offer.vendor.name not in page.text
    assert client.get(reverse("portal:start", args=[secret])).status_code == 410

    later, later_secret = make_invitation(priya, email="ops@vendor.example")
    open_portal(client, later)
    type(later).objects.filter(pk=later.pk).update(expires_at=timezone.now())
    assert client.get(reverse("portal:home", args=[later_secret])).status_code == 410


def test_a_session_opened_for_one_offer_opens_no_other(client, priya):
    invitation, secret = make_invitation(priya)
    other, other_secret = make_invitation(priya)
    open_portal(client, invitation)
    assert client.get(reverse("portal:home", args=[secret])).status_code == 200
    answer = client.get(reverse("portal:home", args=[other_secret]))
    assert answer.status_code == 302
    assert answer.url == reverse("portal:start", args=[other_secret])


def test_signing_out_closes_the_session(client, priya):
    invitation, secret = make_invitation(priya)
    open_portal(client, invitation)
    client.post(reverse("portal:sign_out", args=[secret]))
    assert client.get(reverse("portal:home", args=[secret])).status_code == 302


def test_pages_behind_the_code_are_never_cached(client, priya):
    invitation, secret = make_invitation(priya)
    open_portal(client, invitation)
    page = client.get(reverse("portal:home", args=[secret]))
    assert "no-store" in page["Cache-Control"]


def test_every_use_is_in_the_case_history(client, priya):
    invitation, secret = make_invitation(priya)
    code = _send_code(client, secret)
    client.post(reverse("portal:start", args=[secret]), {"code": code})
    assert InvitationUse.history.filter(invitation_id=invitation.pk).count() == 3


def test_the_portal_speaks_chinese_to_a_chinese_browser(client, priya):
    invitation, secret = make_invitation(priya, language="zh-hans")
    assert "请您就贵方报价作答" in mail.outbox[0].subject
    assert "一次性验证码" in mail.outbox[0].body
    page = client.get(reverse("portal:start", args=[secret]), HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "通过邮件发送验证码" in page.text
    open_portal(client, invitation)
    page = client.get(reverse("portal:home", args=[secret]), HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "按部分列出的答复" in page.text and "退出与数据处理" in page.text


def test_a_stream_of_wrong_codes_fills_no_table(client, priya):
    """Refused codes are put in the history up to what the live codes of an hour allow,
    then once more saying the count stops; every guess is refused all the same."""
    from apps.portal.services.codes import REFUSALS_RECORDED_PER_HOUR

    invitation, secret = make_invitation(priya)
    start = reverse("portal:start", args=[secret])
    for _ in range(REFUSALS_RECORDED_PER_HOUR + 15):  # no live code: nothing to void
        assert client.post(start, {"code": "000000"}).status_code in (400, 429)
    refused = invitation.uses.filter(kind=UseKind.CODE_REFUSED)
    assert refused.count() == REFUSALS_RECORDED_PER_HOUR
    assert "further refusals this hour" in refused.order_by("pk").last().detail
