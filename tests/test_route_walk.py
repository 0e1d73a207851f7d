"""Every route of the site, as every role, never answers 5xx.

The walk reads the URL configuration itself (pages, the REST API with its
router and format suffixes, the schema, the docs and the admin), so a route
added later is walked without touching this file. Each route is requested by
priya, lena, tariq, aude, ada (staff, as in the demo), an anonymous
visitor and a vendor contact signed in to the portal with a code, with ids
of one small world where every record exists; then, by the administrator (who
passes every permission check, so the lookup answers), the anonymous visitor and
the vendor contact, with an id that names nothing (999999) and with a malformed
one where the converter lets it through (a word for ``str``/``slug``/DRF ids,
10**30 for ``int``). GET
always, then each write method the view accepts (as the API's views and
viewsets declare them; POST for function views, the pages of forms) with an
empty body: ``{}`` as JSON to the API, an empty form to pages. The CSRF check
is off, as in Django's test client.

The only hand-kept table is ``PARAMETERS``: which record of the world a path
parameter names. A parameter is known by its name; the generic ``pk`` by the
collection in front of it (``cases/<pk>``, ``acceptance/results/<pk>``). The
admin's object ids come from the model its page edits.
"""

import inspect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.contrib.admin import ModelAdmin
from django.contrib.contenttypes.models import ContentType
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.urls.exceptions import Resolver404
from django.urls.resolvers import RegexPattern
from django.utils import timezone

from apps.acceptance.services import acceptance_attachment_add
from apps.accounts.people import invite, provisioning_token_create
from apps.approvals.acceptances import finding_accept
from apps.approvals.models import Approval
from apps.cases.models import ProcurementCase
from apps.comments.services import comment_add
from apps.contracts.models import ChecklistTemplate
from apps.contracts.services import checklist_save, red_flag_waive
from apps.core.roles import Role
from apps.core.services import tracked_update
from apps.evidence.baselines import baseline_pin
from apps.evidence.models import EvidenceUpload, HarnessToken
from apps.portal.services.invitations import invitation_create
from apps.portal.services.questionnaires import (
    draft_start,
    question_save,
    questionnaire_create,
    version_publish,
)
from apps.scorecards.services import scorecard_save
from apps.sizing.services import compute_demand_save
from apps.vendors.services import certification_create, contact_create, sub_processor_create
from tests.acceptance.factories import approved_offer, record_faults
from tests.acceptance.factories import make_plan as make_acceptance_plan
from tests.access.factories import make_plan as make_network_plan
from tests.assessments.factories import fill_audit_facts, make_assessment
from tests.casework.factories import lapsed_reassessment
from tests.contracts.factories import item, make_checklist, set_statuses, upload_document
from tests.costs.factories import CLEAN, make_budget, make_import
from tests.evidence.factories import make_bundle_record
from tests.packets.factories import DEMAND, make_stored_packet
from tests.portal.factories import open_portal
from tests.portal.review_factories import make_document, make_proposal
from tests.workloads.factories import upload_set

pytestmark = pytest.mark.whole_case

# None: not signed in; VENDOR: a vendor contact who typed the code of the world's invitation.
VENDOR = "vendor"
ROLES = ("priya", "lena", "tariq", "aude", "ada", None, VENDOR)
# An id that names nothing, or a malformed one, is requested by those who reach furthest
# (the administrator, who passes every permission check, so the lookup is what answers),
# an anonymous visitor and the vendor contact; the other roles stop at the checks first.
BAD_ID_ROLES = ("ada", None, VENDOR)
WRITE_METHODS = ("post", "put", "patch", "delete")
MISSING = "999999"
MALFORMED = ("not-an-id", str(10**30))
ADMIN_OBJECT_PARAMETERS = {"object_id", "id", "version_id"}

# Which record of the world each path parameter names.
PARAMETERS: dict[str, Callable[[SimpleNamespace], object]] = {
    # Named parameters, the same record wherever they appear.
    "case_pk": lambda w: w.case.pk,
    "offer_pk": lambda w: w.offer.pk,
    "offer": lambda w: w.offer.pk,  # declared specs are keyed by their offer
    "key": lambda w: "lawful_source",  # a data-export question with an attachment
    "control_key": lambda w: "egress_allow_list",  # an access control of the case's matrix
    "content_type": lambda w: "cases.procurementcase",
    "object_id": lambda w: w.case.pk,
    "content_type_id": lambda w: ContentType.objects.get_for_model(ProcurementCase).pk,
    "format": lambda w: "json",
    "app_label": lambda w: "cases",
    "url": lambda w: "no-such-page/",  # the admin's catch-all
    "area": lambda w: "contracts",  # an area of the case cockpit
    "kind": lambda w: "offer",  # a kind of record people comment on
    "comments/<pk>": lambda w: w.comment.pk,
    "comments/<slug:kind>/<pk>": lambda w: w.offer.pk,
    # ``pk``, by the collection it is the id of.
    "cases/<pk>": lambda w: w.case.pk,
    "vendors/<pk>": lambda w: w.offer.vendor_id,
    "offers/<pk>": lambda w: w.offer.pk,
    "criteria-sets/<pk>": lambda w: w.scorecard.criteria_set_id,
    "scorecards/<pk>": lambda w: w.scorecard.pk,
    "clause-checklists/<pk>": lambda w: w.checklist.pk,
    "clause-checklist-items/<pk>": lambda w: w.flagged_item.pk,
    "red-flag-waivers/<pk>": lambda w: w.waiver.pk,
    "contract-documents/<pk>": lambda w: w.contract_document.pk,
    "vendor-contacts/<pk>": lambda w: w.vendor_contact.pk,
    "vendor-sub-processors/<pk>": lambda w: w.sub_processor.pk,
    "vendor-certifications/<pk>": lambda w: w.certification.pk,
    "checklist-templates/<pk>": lambda w: w.checklist_template.pk,
    "data-export/<pk>": lambda w: w.assessment.pk,
    "data-export-assessments/<pk>": lambda w: w.assessment.pk,
    "data-export/datasets/<pk>": lambda w: w.assessment.datasets.get().pk,
    "data-export-datasets/<pk>": lambda w: w.assessment.datasets.get().pk,
    "data-export/weight-files/<pk>": lambda w: w.assessment.weight_files.get().pk,
    "data-export-weight-files/<pk>": lambda w: w.assessment.weight_files.get().pk,
    "evidence/<pk>": lambda w: w.verification.bundle_id,
    "evidence-bundles/<pk>": lambda w: w.verification.bundle_id,
    "evidence/uploads/<pk>": lambda w: w.upload.pk,
    "spec-verifications/<pk>": lambda w: w.verification.pk,
    "harness-tokens/<pk>": lambda w: w.token.pk,
    "baselines/<pk>": lambda w: w.baseline.pk,
    "approvals/<pk>": lambda w: w.approval.pk,
    "reassessments/<pk>": lambda w: w.reassessment.pk,
    "reassessments/vendors/<pk>": lambda w: w.offer.vendor_id,
    "acceptance_pk": lambda w: w.finding_acceptance.pk,  # a finding's acceptance
    "finding-acceptances/<pk>": lambda w: w.finding_acceptance.pk,
    "acceptance/<pk>": lambda w: w.acceptance_plan.pk,
    "acceptance-plans/<pk>": lambda w: w.acceptance_plan.pk,
    "acceptance/results/<pk>": lambda w: w.acceptance_result.pk,
    "acceptance-results/<pk>": lambda w: w.acceptance_result.pk,
    "acceptance/attachments/<pk>": lambda w: w.acceptance_attachment.pk,
    "packets/<pk>": lambda w: w.packet.pk,
    "packets/requests/<pk>": lambda w: w.packet.request_id,
    "packet-requests/<pk>": lambda w: w.packet.request_id,
    "costs/imports/<pk>": lambda w: w.cost_import.pk,
    "workloads/<pk>": lambda w: w.workload_set.pk,
    "workload-sets/<pk>": lambda w: w.workload_set.pk,
    # The vendor portal's link secret, of an invitation to the world's offer, and what
    # the vendor proposed and sent through it.
    "token": lambda w: w.portal_secret,
    "offers/<int:offer_pk>/vendor/<pk>": lambda w: w.invitation.pk,
    "offers/<int:offer_pk>/vendor/answers/<pk>": lambda w: w.proposal.pk,
    "offers/<int:offer_pk>/vendor/documents/<pk>": lambda w: w.vendor_document.pk,
    "section": lambda w: w.proposal.section,
    "portal/<str:token>/answers/<slug:section>/replies/<pk>": lambda w: w.proposal.pk,
    # The questionnaire library: a questionnaire with a published version and a draft,
    # the draft's question, and the published version as sent with the invitation.
    "questionnaires/<pk>": lambda w: w.questionnaire_draft.questionnaire_id,
    "question_pk": lambda w: w.questionnaire_draft.questions.get().pk,
    "number": lambda w: 1,
    "questionnaire-versions/<pk>": lambda w: w.questionnaire_draft.pk,
    "vendor-invitations/<pk>": lambda w: w.invitation.pk,
    "portal/<str:token>/questionnaires/<pk>": lambda w: w.invitation.questionnaires.get().pk,
    # Administration: a person invited by e-mail, their invitation's link secret, and a
    # provisioning token; SCIM's users are accounts and its groups the roles.
    "secret": lambda w: w.account_secret,
    "people/<pk>": lambda w: w.account_invitation.user_id,
    "people/invitations/<pk>": lambda w: w.account_invitation.pk,
    "people/provisioning/<pk>": lambda w: w.provisioning.record.pk,
    "scim_user_id": lambda w: w.account_invitation.user_id,
    "scim_group_id": lambda w: Role.AUDITOR,
    "workload": lambda w: "inference",  # a workload kind's criteria preset
}


@dataclass(frozen=True)
class Route:
    """One URL pattern, with the chain of patterns that leads to it."""

    chain: tuple
    callback: Callable

    @property
    def route(self) -> str:
        # As ResolverMatch.route spells it: each piece's leading "^" dropped.
        return "".join(str(piece.pattern).removeprefix("^") for piece in self.chain)

    @property
    def is_api(self) -> bool:
        return self.route.startswith("api/")

    @property
    def model_admin(self) -> ModelAdmin | None:
        """The admin of the model this page edits, if it is one of a model's admin pages."""
        if hasattr(self.callback, "model_admin"):
            return self.callback.model_admin
        view = self.callback
        while view is not None:  # a page of the admin's own, e.g. a user's password page
            if isinstance(getattr(view, "__self__", None), ModelAdmin):
                return view.__self__
            view = getattr(view, "__wrapped__", None)
        return None

    def parameters(self) -> list[str]:
        names = []
        positional = iter(_positional_names(self.callback))
        for piece in self.chain:
            if isinstance(piece.pattern, RegexPattern):
                names += [name or next(positional) for _, _, name in _groups(str(piece.pattern))]
            else:
                names += list(piece.pattern.converters)
        return names

    def key_of(self, name: str) -> str | None:
        """The ``PARAMETERS`` key of a parameter; None where the admin model supplies it."""
        if self.model_admin is not None and name in ADMIN_OBJECT_PARAMETERS:
            return None
        if name != "pk":
            return name
        in_front = re.split(r"\(\?P<pk>|<(?:\w+:)?pk>", self.route)[0]
        collection = in_front.removeprefix("api/v1/").strip("/")
        return f"{collection}/<pk>"

    def methods(self) -> list[str]:
        """GET, and each write method the view accepts."""
        actions = getattr(self.callback, "actions", None)  # a DRF viewset route
        view_class = getattr(self.callback, "cls", None) or getattr(
            self.callback, "view_class", None
        )
        if actions is not None:
            accepted = set(actions)
        elif view_class is not None:
            accepted = {m for m in view_class.http_method_names if hasattr(view_class, m)}
        else:
            # A function view cannot be asked which methods it takes. Those here are
            # pages of HTML forms (the app's and the admin's), which post.
            accepted = {"post"}
        return ["get", *[m for m in WRITE_METHODS if m in accepted]]


_REGEX_LEFT = re.compile(r"[\\^$()\[\]?*+|{}]")


def _groups(regex: str) -> list[tuple[int, int, str | None]]:
    """The outermost capturing groups of a regex: start, end, and name (None if unnamed)."""
    groups, depth, at, start, name = [], 0, 0, 0, None
    while at < len(regex):
        char = regex[at]
        if char == "\\":
            at += 2
            continue
        if char == "(":
            if depth == 0:
                named = re.match(r"\(\?P<(\w+)>", regex[at:])
                start, name = at, named.group(1) if named else None
                capturing = named is not None or not regex.startswith("(?", at)
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0 and capturing:
                groups.append((start, at + 1, name))
        at += 1
    return groups


def _positional_names(view: Callable) -> list[str]:
    """What the view calls the arguments an unnamed regex group passes it."""
    names = list(inspect.signature(view).parameters)
    return names[names.index("request") + 1 :] if "request" in names else names


def _walk(patterns, chain=()) -> Iterator[Route]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, (*chain, pattern))
        elif isinstance(pattern, URLPattern):
            yield Route(chain=(*chain, pattern), callback=pattern.callback)


def all_routes() -> list[Route]:
    return list(_walk(get_resolver().url_patterns))


def _fill_regex(regex: str, values: list[str]) -> str:
    """A regex pattern's path with each of its groups replaced by its value, in order."""
    out, at = [], 0
    for (start, end, _), value in zip(_groups(regex), values, strict=True):
        out += [regex[at:start], value]
        at = end
    out.append(regex[at:])
    path = "".join(out).removeprefix("^").removesuffix("$").replace("/?", "").replace("\\.", ".")
    if _REGEX_LEFT.search(path.replace(".", "")):
        raise AssertionError(f"cannot build a path from the pattern {regex!r}")
    return path


def build_path(route: Route, values: dict[str, str]) -> str:
    names = iter(route.parameters())
    path = "/"
    for piece in route.chain:
        pattern = piece.pattern
        if isinstance(pattern, RegexPattern):
            regex = str(pattern)
            path += _fill_regex(regex, [values[next(names)] for _ in _groups(regex)])
        else:
            converters = pattern.converters
            for _ in converters:
                next(names)
            path += re.sub(
                r"<(?:\w+:)?(\w+)>",
                lambda m: converters[m.group(1)].to_url(values[m.group(1)]),
                str(pattern),
            )
    return path


def reaches(path: str, route: Route) -> bool:
    """Whether the path is answered by this very pattern (the converter let the value in)."""
    try:
        match = resolve(path)
    except Resolver404:
        return False
    return match.func is route.callback and match.route == route.route


def valid_values(route: Route, world: SimpleNamespace) -> dict[str, str]:
    values = {}
    for name in route.parameters():
        key = route.key_of(name)
        if key is None:
            values[name] = _admin_value(route.model_admin.model, name)
        else:
            values[name] = str(PARAMETERS[key](world))
    return values


def _admin_value(model, name: str) -> str:
    """The first record of the model the admin page edits, or its newest past version."""
    record = model._default_manager.order_by("pk").first()
    if record is None:
        return MISSING
    if name == "version_id":
        return str(record.history.order_by("history_id").last().history_id)
    return str(record.pk)


def paths_of(route: Route, world: SimpleNamespace) -> list[str]:
    """The path with the world's ids, then each parameter in turn missing or malformed."""
    good = valid_values(route, world)
    paths = [build_path(route, good)]
    assert reaches(paths[0], route), f"{paths[0]} does not reach {route.route}"
    for name in good:
        missing = build_path(route, {**good, name: MISSING})
        # The first malformed value that the converter lets through, if any does.
        malformed = (build_path(route, {**good, name: wrong}) for wrong in MALFORMED)
        malformed = next((path for path in malformed if reaches(path, route)), None)
        for path in (missing, malformed):
            if path is not None and path not in paths and reaches(path, route):
                paths.append(path)
    return paths


def test_every_route_parameter_names_a_record_of_the_world():
    unknown = {
        f"{key} (in {route.route})"
        for route in all_routes()
        for name in route.parameters()
        if (key := route.key_of(name)) is not None and key not in PARAMETERS
    }
    assert not unknown, "add these path parameters to PARAMETERS: " + "; ".join(sorted(unknown))


def test_the_walk_reads_every_kind_of_route():
    routes = {route.route for route in all_routes()}
    assert "api/schema/" in routes and "api/docs/" in routes
    assert any(r.startswith("api/v1/cases/(?P<pk>") for r in routes)  # the router's
    assert any(r.startswith("admin/cases/procurementcase/") for r in routes)
    assert "cases/<int:pk>/" in routes


def build_world(people) -> SimpleNamespace:
    """One case where every kind of record exists, built through the services."""
    priya, lena, tariq = people["priya"], people["lena"], people["tariq"]
    case, offer = approved_offer(people)
    second_offer = case.offers.exclude(pk=offer.pk).order_by("pk").first()
    checklist = make_checklist(lena, offer=second_offer)
    set_statuses(lena, checklist, {"sla": "missing"})
    flagged = item(checklist, "sla")
    waiver = red_flag_waive(
        actor=lena,
        item=flagged,
        reason="Service credits suffice",
        evidence=SimpleUploadedFile("credits.pdf", b"%PDF-1.4 credits", "application/pdf"),
    )
    # Images handed over in the vendor's own format: a finding the legal reviewer accepts.
    checklist_save(
        actor=lena,
        checklist=checklist,
        items=[],
        reason="Terms read from the contract",
        contract_terms={"image_format": "proprietary"},
    )
    finding_acceptance = finding_accept(
        actor=lena,
        case=case,
        code="contracts.image_not_portable",
        offer_id=second_offer.pk,
        key="image_format",
        role=Role.LEGAL,
        reason="We rebuild from our own Dockerfiles",
        expires_on=timezone.localdate() + timedelta(days=90),
        evidence=SimpleUploadedFile("rebuild.txt", b"docker build -f Dockerfile .", "text/plain"),
    )
    assessment = make_assessment(
        lena,
        case,
        offer=offer,
        attachments={
            "lawful_source": SimpleUploadedFile("letter.pdf", b"%PDF-1.4 letter", "application/pdf")
        },
    )
    fill_audit_facts(lena, assessment)  # a dataset and a weight file, for their pages
    acceptance_plan = make_acceptance_plan(tariq, offer)
    acceptance_result = record_faults(tariq, acceptance_plan)[0]
    acceptance_attachment = acceptance_attachment_add(
        actor=tariq,
        result=acceptance_result,
        upload=SimpleUploadedFile("run.log", b"all nodes resumed\n", "text/plain"),
    )
    make_network_plan(tariq, case)
    make_budget(priya, case)
    compute_demand_save(actor=priya, case=case, fields=DEMAND)
    token = HarnessToken.objects.filter(case=case).order_by("pk").first()
    bundle = make_bundle_record(case, offer, token, n=1, content=b'{"walked": true}')
    measured = make_bundle_record(case, offer, token, n=2)
    measured = tracked_update(
        measured,
        actor=None,
        reason="Measured",
        fields={"summary": {"levels": [{"concurrency": 1, "output_tok_s": {"mean": 10.0}}]}},
    )
    baseline = baseline_pin(actor=tariq, bundle=measured, offer=offer, reason="Known good")
    upload = EvidenceUpload.objects.create(
        token=token,
        case=case,
        sha256="0" * 64,
        size=100,
        storage_name="",
        state=EvidenceUpload.State.REFUSED,
        refusal="Not a bundle.",
        refusal_field="nonce",
        refusal_status=400,
    )
    questionnaire = questionnaire_create(actor=priya, title="Security baseline")
    question_save(
        actor=priya,
        version=questionnaire,
        fields={"text": "Encrypted at rest?", "kind": "yes_no", "expected_yes": True, "weight": 1},
    )
    published = version_publish(actor=priya, version=questionnaire, note="First")
    invitation, portal_secret = invitation_create(
        actor=priya,
        offer=offer,
        contact_name="Li Wei",
        email="li.wei@vendor.example",
        questionnaires=[published],
    )
    account_invitation, account_secret = invite(
        actor=people["ada"],
        email="mei@example.org",
        first_name="Mei",
        last_name="Chen",
        roles=[Role.AUDITOR],
    )
    vendor = offer.vendor
    return SimpleNamespace(
        vendor_contact=contact_create(
            actor=people["priya"], vendor=vendor, name="Mei", email="mei@vendor.example"
        ),
        sub_processor=sub_processor_create(
            actor=people["priya"], vendor=vendor, name="Colo", country="Japan", service="Racks"
        ),
        certification=certification_create(
            actor=people["lena"],
            vendor=vendor,
            kind="soc2_type2",
            issuer="Audit LLP",
            issued_on=timezone.localdate() - timedelta(days=300),
            expires_on=timezone.localdate() + timedelta(days=30),
            report=SimpleUploadedFile("soc2.pdf", b"%PDF-1.4 report", "application/pdf"),
        ),
        account_invitation=account_invitation,
        account_secret=account_secret,
        provisioning=provisioning_token_create(actor=people["ada"], label="Provider"),
        case=case,
        offer=offer,
        invitation=invitation,
        portal_secret=portal_secret,
        questionnaire_draft=draft_start(actor=priya, questionnaire=published.questionnaire),
        proposal=make_proposal(invitation, "spec", "cards_per_node", "8"),
        vendor_document=make_document(invitation),
        checklist=checklist,
        flagged_item=flagged,
        waiver=waiver,
        contract_document=upload_document(lena, second_offer),
        finding_acceptance=finding_acceptance,
        checklist_template=ChecklistTemplate.objects.order_by("pk").first(),
        scorecard=scorecard_save(
            actor=priya, offer=offer, scores={"pricing": {"score": 4, "comment": "Fair"}}
        ),
        assessment=assessment,
        verification=bundle.verification,
        token=token,
        upload=upload,
        approval=Approval.objects.filter(case=case).order_by("pk").first(),
        baseline=baseline,
        acceptance_plan=acceptance_plan,
        acceptance_result=acceptance_result,
        acceptance_attachment=acceptance_attachment,
        packet=make_stored_packet(priya, case),
        cost_import=make_import(priya, case, ("2026-09", CLEAN)),
        comment=comment_add(actor=tariq, record=offer, body="@priya measured as declared"),
        workload_set=upload_set(tariq, case),
        reassessment=lapsed_reassessment(offer),
    )


@pytest.fixture
def _isolated_files(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PACKET_SIGNING_DIR = str(tmp_path / "signing")
    settings.PACKET_SIGNING_PKCS12_PATH = ""
    settings.PACKET_TSA_URL = ""


def _request(client: Client, method: str, path: str, *, api: bool, headers=None):
    if method == "get":
        return client.get(path, headers=headers)
    if api:
        return client.generic(
            method.upper(), path, "{}", content_type="application/json", headers=headers
        )
    return client.generic(
        method.upper(),
        path,
        "",
        content_type="application/x-www-form-urlencoded",
        headers=headers,
    )


# The walk is cut into shards of routes (every n-th route), each over a world of its own,
# so that test processes share it; every route is in exactly one shard.
SHARDS = 4


@pytest.mark.parametrize("shard", range(SHARDS))
def test_no_route_answers_a_server_error_to_anyone(people, monkeypatch, _isolated_files, shard):
    from rest_framework.throttling import SimpleRateThrottle

    # Thousands of requests in seconds: rate limits would answer 429 to most of them.
    monkeypatch.setattr(SimpleRateThrottle, "allow_request", lambda self, request, view: True)
    ada = people["ada"]
    ada.is_staff = True  # the demo's administrator signs in to the admin too
    ada.save(update_fields=["is_staff"])
    world = build_world(people)
    scim_headers = {"Authorization": f"Bearer {world.provisioning.token}"}

    clients = {}
    for role in ROLES:
        clients[role] = Client()
        if role == VENDOR:
            open_portal(clients[role], world.invitation)
        elif role is not None:
            clients[role].force_login(people[role])

    routes = all_routes()[shard::SHARDS]
    paths = {route: paths_of(route, world) for route in routes}
    plan = [
        (route, path, ROLES if index == 0 else BAD_ID_ROLES)
        for route in routes
        for index, path in enumerate(paths[route])
    ]
    failures, found, requests = [], set(), 0
    # Every GET first, then the writes, so that what an empty write changes (a token
    # revoked, a sign-out) comes after every read of the world as built.
    for method in ("get", *WRITE_METHODS):
        for route, path, roles in plan:
            if method not in route.methods():
                continue
            for role in roles:
                client = clients[role]
                requests += 1
                try:
                    # SCIM answers a provisioning token only: the administrator's client
                    # carries the world's, as the identity provider would.
                    headers = scim_headers if role == "ada" and path.startswith("/scim/") else None
                    response = _request(client, method, path, api=route.is_api, headers=headers)
                    if response.streaming:  # read to the end: a stream can fail midway
                        b"".join(response.streaming_content)
                    status = response.status_code
                except Exception as error:  # the request did not complete
                    failures.append(f"{method.upper()} {path} as {role}: raised {error!r}")
                    continue
                if status >= 500:
                    failures.append(f"{method.upper()} {path} as {role}: {status}")
                if role is not None and status not in (401, 403, 404, 405):
                    found.add(path)  # past the checks that come before the lookup
                if role == VENDOR:
                    open_portal(client, world.invitation)  # the request may have signed out
                elif method != "get" and role is not None and "_auth_user_id" not in client.session:
                    client.force_login(people[role])  # the request signed out

    assert requests > 1000 // SHARDS
    # The world's ids name records: a route whose good path nobody gets past the
    # lookup with, by any method, is walked blind.
    unfound = [
        paths[route][0]
        for route in routes
        if route.parameters() and route.model_admin is None and paths[route][0] not in found
    ]
    assert not unfound, "no role found the world's record at: " + ", ".join(unfound)
    assert not failures, f"{len(failures)} of {requests} requests failed:\n" + "\n".join(failures)
