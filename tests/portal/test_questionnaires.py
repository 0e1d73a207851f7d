"""The questionnaire library through HTTP: authored, published, sent with an invitation,
answered by the vendor through the portal, scored on the review page, and offered again
to the same vendor in a later invitation."""

import re

import pytest
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from apps.core.services import StateConflict
from apps.portal.models import (
    Question,
    Questionnaire,
    QuestionnaireAnswer,
    QuestionnaireVersion,
    SentQuestionnaire,
    VendorDocument,
    VendorInvitation,
)
from apps.portal.services import questionnaires as services
from tests.portal.factories import make_offer_with_checklist, open_portal

pytestmark = pytest.mark.django_db

QUESTIONS = [
    {"text": "Is customer data encrypted at rest?", "kind": "yes_no", "expected_yes": "yes"},
    {
        "text": "Which data-centre tier hosts the nodes?",
        "kind": "choice",
        "options": "Tier IV = 100\nTier III = 50\nNone = 0",
    },
    {
        "text": "Monthly availability you commit to",
        "kind": "number",
        "unit": "%",
        "min_value": "0",
        "max_value": "100",
        "threshold": "99.9",
        "threshold_direction": "ge",
        "weight": "2",
    },
    {
        "text": "When does your ISO 27001 certificate expire?",
        "kind": "date",
        "date_limit": "2027-01-01",
        "date_direction": "not_before",
    },
    {"text": "Your latest SOC 2 report", "kind": "file"},
]


def _question_body(fields: dict) -> dict:
    return {"required": "on", "weight": "1", **fields}


def _author(browser: Client) -> QuestionnaireVersion:
    response = browser.post(
        reverse("portal:questionnaire-create"),
        {"title": "Security baseline", "purpose": "What every GPU host must answer."},
    )
    assert response.status_code == 302
    questionnaire = Questionnaire.objects.get(title="Security baseline")
    for fields in QUESTIONS:
        response = browser.post(
            reverse("portal:question-add", args=[questionnaire.pk]), _question_body(fields)
        )
        assert response.status_code == 302, response.content.decode()
    response = browser.post(
        reverse("portal:questionnaire-publish", args=[questionnaire.pk]), {"note": "First cut"}
    )
    assert response.status_code == 302
    return questionnaire.versions.get()


def _invite(
    browser: Client, offer, version, email="li.wei@vendor.example"
) -> tuple[VendorInvitation, str]:
    before = len(mail.outbox)
    response = browser.post(
        reverse("portal:invitations", args=[offer.pk]),
        {
            "contact_name": "Li Wei",
            "email": email,
            "language": "en",
            "days": "14",
            "questionnaires": [version.pk],
        },
    )
    assert response.status_code == 302, response.content.decode()
    assert len(mail.outbox) == before + 1
    secret = re.search(r"/portal/([^/\s]+)/", mail.outbox[-1].body).group(1)
    return VendorInvitation.objects.order_by("-pk").first(), secret


def _keys(version) -> dict[str, str]:
    return {q.kind: q.key for q in version.questions.all()}


def _answer_url(secret: str, sent: SentQuestionnaire) -> str:
    return reverse("portal:questionnaire-answer", args=[secret, sent.pk])


def test_authored_sent_answered_scored_and_offered_again(people, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    priya = Client()
    priya.force_login(people["priya"])
    version = _author(priya)
    assert version.is_published and version.questions.count() == 5
    keys = _keys(version)
    offer = make_offer_with_checklist(people["priya"])
    invitation, secret = _invite(priya, offer, version)
    sent = SentQuestionnaire.objects.get(invitation=invitation)

    vendor = Client()
    open_portal(vendor, invitation)
    home = vendor.get(reverse("portal:home", args=[secret]))
    assert "Security baseline" in home.content.decode()
    page = vendor.get(_answer_url(secret, sent))
    assert page.status_code == 200
    assert 'type="date"' in page.content.decode()

    answers = {
        keys["yes_no"]: "yes",
        keys["choice"]: "Tier III",
        keys["number"]: "lots",  # refused
        keys["date"]: "2027-06-30",
        keys["file"]: SimpleUploadedFile("soc2.pdf", b"%PDF-1.4 soc2\n", "application/pdf"),
        "save": "1",
    }
    refused = vendor.post(_answer_url(secret, sent), answers)
    assert refused.status_code == 400
    assert "Type a number" in refused.content.decode()
    assert QuestionnaireAnswer.objects.count() == 0
    assert VendorDocument.objects.count() == 0  # the file of a refused save is not kept

    answers[keys["number"]] = "99.5"
    answers[keys["file"]] = SimpleUploadedFile("soc2.pdf", b"%PDF-1.4 soc2\n", "application/pdf")
    assert vendor.post(_answer_url(secret, sent), answers).status_code == 302
    assert QuestionnaireAnswer.objects.filter(sent=sent).count() == 5
    document = VendorDocument.objects.get()
    assert len(document.sha256) == 64
    submitted = vendor.post(
        _answer_url(secret, sent),
        {**{k: v for k, v in answers.items() if k != keys["file"]}, "submit": "1"},
    )
    assert submitted.status_code == 302
    sent.refresh_from_db()
    assert sent.submitted_at is not None
    # Submitted: no more changes.
    again = vendor.post(_answer_url(secret, sent), {keys["yes_no"]: "no", "save": "1"})
    assert again.status_code == 200
    assert QuestionnaireAnswer.objects.get(sent=sent, question__key=keys["yes_no"]).value == "yes"

    lena = Client()
    lena.force_login(people["lena"])
    review = lena.get(reverse("portal:answers", args=[offer.pk])).content.decode()
    # yes 1 + Tier III 0.5 + 99.5 below 99.9 (0 of 2) + date 1 + file 1 = 3.5 of 6.
    assert "58.3 %" in review
    assert "Missed what was expected:" in review
    assert "Which data-centre tier hosts the nodes?" in review
    assert "Monthly availability you commit to" in review.split("Missed what was expected:")[1]

    # A renewal: a later invitation of the same vendor is offered the answers again.
    renewal, renewal_secret = _invite(priya, offer, version, email="ops@vendor.example")
    renewed = SentQuestionnaire.objects.get(invitation=renewal)
    vendor2 = Client()
    open_portal(vendor2, renewal)
    page = vendor2.get(_answer_url(renewal_secret, renewed)).content.decode()
    assert "are filled in below" in page
    assert 'value="99.5"' in page
    assert re.search(r'value="yes"[^>]*checked', page)
    assert QuestionnaireAnswer.objects.filter(sent=renewed).count() == 0  # only offered
    changed = {**{k: v for k, v in answers.items() if k != keys["file"]}, keys["number"]: "99.95"}
    changed[keys["file"]] = SimpleUploadedFile("soc2.pdf", b"%PDF-1.4 soc2\n", "application/pdf")
    assert (
        vendor2.post(_answer_url(renewal_secret, renewed), {**changed, "submit": "1"}).status_code
        == 302
    )
    review = lena.get(reverse("portal:answers", args=[offer.pk])).content.decode()
    assert "changed" in review and "unchanged" in review
    assert "91.7 %" in review  # 5.5 of 6 now that the availability meets 99.9


def test_a_published_version_is_never_edited_and_the_next_keeps_the_keys(people):
    priya = people["priya"]
    draft = services.questionnaire_create(actor=priya, title="Exit")
    question = services.question_save(
        actor=priya,
        version=draft,
        fields={
            "text": "Data returned within 30 days?",
            "kind": "yes_no",
            "required": True,
            "weight": 1,
        },
    )
    services.version_publish(actor=priya, version=draft, note="First")
    with pytest.raises(StateConflict):
        services.question_save(
            actor=priya,
            version=draft,
            question=question,
            fields={"text": "Changed", "kind": "yes_no", "weight": 1},
        )
    with pytest.raises(StateConflict):
        services.question_remove(actor=priya, question=question)
    nxt = services.draft_start(actor=priya, questionnaire=draft.questionnaire)
    assert nxt.number == 2
    assert list(nxt.questions.values_list("key", flat=True)) == [question.key]
    assert Question.objects.get(pk=question.pk).text == "Data returned within 30 days?"


def test_an_author_s_bad_question_is_refused_whole(people):
    priya = people["priya"]
    draft = services.questionnaire_create(actor=priya, title="Bad")
    from django.core.exceptions import ValidationError

    for fields in (
        {"text": "Tier?", "kind": "choice", "options": [{"label": "Only", "score": 100}]},
        {"text": "Uptime?", "kind": "number", "threshold": 99},
        {"text": "Range?", "kind": "number", "min_value": 5, "max_value": 1},
        {"text": "", "kind": "yes_no"},
    ):
        with pytest.raises(ValidationError):
            services.question_save(actor=priya, version=draft, fields={"weight": 1, **fields})
    assert not draft.questions.exists()
    with pytest.raises(ValidationError):
        services.version_publish(actor=priya, version=draft, note="Empty")


# --- Who may: every page and endpoint, per role ---------------------------------------------

EVERYONE = {"priya", "pablo", "lena", "tariq", "fiona", "aude", "ada"}
AUTHORS = {"priya", "pablo", "lena", "tariq", "ada"}


@pytest.fixture
def library(people):
    priya = people["priya"]
    published = services.questionnaire_create(actor=priya, title="Library")
    services.question_save(
        actor=priya,
        version=published,
        fields={
            "text": "Encrypted?",
            "kind": "yes_no",
            "expected_yes": True,
            "weight": 1,
            "required": True,
        },
    )
    published = services.version_publish(actor=priya, version=published, note="First")
    draft = services.draft_start(actor=priya, questionnaire=published.questionnaire)
    offer = make_offer_with_checklist(priya)
    from tests.portal.factories import make_invitation

    invitation, secret = make_invitation(priya, offer, questionnaires=[published])
    return {
        "questionnaire": published.questionnaire,
        "published": published,
        "draft": draft,
        "question": draft.questions.get(),
        "invitation": invitation,
        "secret": secret,
        "sent": invitation.questionnaires.get(),
    }


PAGES = [
    ("portal:questionnaires", lambda w: [], EVERYONE),
    ("portal:questionnaire-create", lambda w: [], AUTHORS),
    ("portal:questionnaire", lambda w: [w["questionnaire"].pk], EVERYONE),
    ("portal:questionnaire-version", lambda w: [w["questionnaire"].pk, 1], EVERYONE),
    ("portal:question-edit", lambda w: [w["questionnaire"].pk, w["question"].pk], AUTHORS),
]
POSTS = [
    ("portal:questionnaire-draft", lambda w: [w["questionnaire"].pk]),
    ("portal:question-add", lambda w: [w["questionnaire"].pk]),
    ("portal:question-remove", lambda w: [w["questionnaire"].pk, w["question"].pk]),
    ("portal:questionnaire-publish", lambda w: [w["questionnaire"].pk]),
]


@pytest.mark.parametrize("name,args,allowed", PAGES, ids=[p[0] for p in PAGES])
@pytest.mark.parametrize("role", sorted(EVERYONE))
def test_pages_per_role(browser_as, library, name, args, allowed, role):
    response = browser_as(role).get(reverse(name, args=args(library)))
    assert response.status_code == (200 if role in allowed else 403)


@pytest.mark.parametrize("name,args", POSTS, ids=[p[0] for p in POSTS])
@pytest.mark.parametrize("role", ["fiona", "aude"])
def test_readers_cannot_write(browser_as, library, name, args, role):
    before = (Question.history.count(), QuestionnaireVersion.history.count())
    response = browser_as(role).post(
        reverse(name, args=args(library)),
        {"note": "x", "text": "x", "kind": "yes_no", "weight": "1"},
    )
    assert response.status_code == 403
    assert (Question.history.count(), QuestionnaireVersion.history.count()) == before


@pytest.mark.parametrize("name,args", POSTS, ids=[p[0] for p in POSTS])
def test_authors_write(browser_as, library, name, args):
    response = browser_as("lena").post(
        reverse(name, args=args(library)),
        {"note": "Second", "text": "Another?", "kind": "yes_no", "weight": "1"},
    )
    assert response.status_code == 302


@pytest.mark.parametrize(
    "name,args", [(p[0], p[1]) for p in PAGES] + POSTS, ids=[p[0] for p in PAGES + POSTS]
)
def test_anonymous_and_the_vendor_are_sent_to_sign_in(library, name, args):
    vendor = Client()
    open_portal(vendor, library["invitation"])
    for browser in (Client(), vendor):
        response = (
            browser.post(reverse(name, args=args(library)))
            if (name, args) in POSTS
            else browser.get(reverse(name, args=args(library)))
        )
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


def test_the_vendor_reaches_only_its_own_questionnaires(library, people):
    other, other_secret = __import__(
        "tests.portal.factories", fromlist=["make_invitation"]
    ).make_invitation(
        people["priya"], email="other@vendor.example", questionnaires=[library["published"]]
    )
    vendor = Client()
    open_portal(vendor, library["invitation"])
    mine = reverse("portal:questionnaire-answer", args=[library["secret"], library["sent"].pk])
    assert vendor.get(mine).status_code == 200
    theirs = reverse(
        "portal:questionnaire-answer", args=[library["secret"], other.questionnaires.get().pk]
    )
    assert vendor.get(theirs).status_code == 404
    assert Client().get(mine).status_code == 302  # no code typed: to the code page


API = [
    lambda w: "/api/v1/questionnaires/",
    lambda w: f"/api/v1/questionnaires/{w['questionnaire'].pk}/",
    lambda w: "/api/v1/questionnaire-versions/?published=1",
    lambda w: f"/api/v1/questionnaire-versions/{w['published'].pk}/",
    lambda w: f"/api/v1/vendor-invitations/{w['invitation'].pk}/questionnaires/",
]


@pytest.mark.parametrize("path", API)
@pytest.mark.parametrize("role", sorted(EVERYONE))
def test_api_reads_per_role(api_as, library, path, role):
    response = api_as(role).get(path(library))
    assert response.status_code == 200


@pytest.mark.parametrize("path", API)
def test_api_refuses_anonymous_and_the_vendor(library, path):
    vendor = Client()
    open_portal(vendor, library["invitation"])
    assert Client().get(path(library)).status_code in (401, 403)
    assert vendor.get(path(library)).status_code in (401, 403)


def test_api_writes_are_not_offered(api_as, library):
    before = Questionnaire.objects.count()
    assert api_as("ada").post("/api/v1/questionnaires/", {"title": "x"}).status_code in (403, 405)
    assert Questionnaire.objects.count() == before


def test_api_answers_and_score(api_as, library):
    sent = library["sent"]
    services.answers_save(
        invitation=library["invitation"],
        sent=sent,
        typed={library["published"].questions.get().key: "no"},
        submit=True,
    )
    data = (
        api_as("aude")
        .get(f"/api/v1/vendor-invitations/{library['invitation'].pk}/questionnaires/")
        .json()
    )
    assert data[0]["score_percent"] == "0.0"
    assert data[0]["score"] == "0 %"
    assert data[0]["missed"] == [library["published"].questions.get().key]
    assert data[0]["answers"][0]["answer"] == "No"
    version = (
        api_as("fiona").get(f"/api/v1/questionnaire-versions/{library['published'].pk}/").json()
    )
    assert version["questions"][0]["expected_yes"] is True


def test_a_question_given_only_what_its_kind_needs_is_kept(people):
    """Through the service, as the demo and the API give it: the fields left out read as
    blank, not as missing."""
    draft = services.questionnaire_create(actor=people["lena"], title="Minimal")
    for kind in ("yes_no", "number", "date", "file"):
        question = services.question_save(
            actor=people["lena"], version=draft, fields={"text": f"A {kind}?", "kind": kind}
        )
        assert question.date_direction == "" and question.threshold_direction == ""


def test_a_question_changed_meanwhile_is_refused_with_409(browser_as, library):
    question = library["question"]
    seen = question.version
    services.question_save(
        actor=library["draft"].questionnaire.owner,
        version=library["draft"],
        question=question,
        fields={"text": "Encrypted at rest, keys held by us?", "kind": "yes_no", "weight": 1},
    )
    url = reverse("portal:question-edit", args=[library["questionnaire"].pk, question.pk])
    body = {"text": "Mine", "kind": "yes_no", "weight": "1", "version": str(seen)}
    response = browser_as("tariq").post(url, body)
    assert response.status_code == 409
    assert Question.objects.get(pk=question.pk).text == "Encrypted at rest, keys held by us?"


def test_a_published_version_refuses_an_edit_through_the_page(browser_as, library):
    published_question = library["published"].questions.get()
    url = reverse("portal:question-edit", args=[library["questionnaire"].pk, published_question.pk])
    assert browser_as("priya").get(url).status_code == 404  # only the draft's questions
