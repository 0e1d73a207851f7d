"""Checklists built through the services, as Lena would build them."""

from apps.contracts.services import checklist_create, checklist_save
from tests.factories import FULL_SPEC, make_case, make_offer


def make_checklist(lena, *, offer=None, creator=None, statuses=None):
    """A checklist for ``offer`` (a new one if not given), with ``statuses`` by item key."""
    if offer is None:
        offer = make_offer(creator or lena, make_case(creator or lena), spec=FULL_SPEC)
    checklist = checklist_create(actor=lena, offer=offer)
    if statuses:
        set_statuses(lena, checklist, statuses)
    checklist.refresh_from_db()
    return checklist


def set_statuses(lena, checklist, statuses, reason="Reviewed"):
    items = {item.key: item for item in checklist.items.all()}
    return checklist_save(
        actor=lena,
        checklist=checklist,
        items=[{"id": items[key].pk, "status": status} for key, status in statuses.items()],
        reason=reason,
    )


def all_acceptable(checklist):
    return {item.key: "acceptable" for item in checklist.items.all()}


def item(checklist, key):
    return checklist.items.get(key=key)


def make_legal(username="leo"):
    """A second legal reviewer, to confirm the waivers of high-severity items."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from apps.core.roles import Role

    user = get_user_model().objects.create_user(
        username=username, password="pw", first_name=username.title()
    )
    user.groups.add(Group.objects.get(name=Role.LEGAL))
    return user


def template_rows(*, high_severity=()):
    """The latest template's items as the API publishes them, ``high_severity`` keys marked."""
    from apps.contracts.models import ChecklistTemplate

    latest = ChecklistTemplate.objects.order_by("-number").first()
    return [
        {
            "key": i.key,
            "title": i.title,
            "sub_points": i.sub_points,
            "guidance": i.guidance,
            "required": i.required,
            "high_severity": i.key in high_severity,
        }
        for i in latest.items.order_by("number")
    ]


def pdf_bytes(pages: int = 3) -> bytes:
    """A real PDF of ``pages`` blank pages."""
    import io

    from pypdf import PdfWriter

    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=595, height=842)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx_bytes(*, body: bool = True) -> bytes:
    """A zip shaped as a Word document (``word/document.xml``), or without it."""
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        if body:
            archive.writestr("word/document.xml", "<w:document/>")
    return out.getvalue()


def upload_document(actor, offer, kind="msa", *, pages=3, name="msa.pdf", raw=None):
    """A signed contract document of ``offer``, stored through the service."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from apps.contracts.services import contract_document_upload

    raw = pdf_bytes(pages) if raw is None else raw
    return contract_document_upload(
        actor=actor, offer=offer, kind=kind, upload=SimpleUploadedFile(name, raw)
    )
