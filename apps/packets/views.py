"""Browser pages: request a packet, watch it being made, download it, verify one."""

from django.core.exceptions import ValidationError
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from apps.cases.selectors import case_get_for
from apps.core.access import role_required
from apps.core.downloads import stored_file_response
from apps.core.lists import filtered_page
from apps.core.uploads import UploadPolicy, refused_unread
from apps.packets.filters import PacketListFilter
from apps.packets.forms import (
    MAX_UPLOAD_BYTES,
    PacketRequestForm,
    PacketVerifyForm,
    too_large_message,
)
from apps.packets.models import DocumentKind, kinds_issuable_by
from apps.packets.selectors import (
    packet_get_for,
    packet_request_get_for,
    packet_requests_of_case,
    packet_stored_file,
    packets_of_case,
)
from apps.packets.services import packet_language, packet_request_create
from apps.packets.verification import verify_packet_bytes

# Multipart framing around the file; a body beyond the limit plus this is refused unread.
REFRESH_SECONDS = 2


@role_required("packets.view_auditpacket")
def packet_list(request: HttpRequest, pk: int) -> HttpResponse:
    """The case's packets, newest first unless sorted, 50 a page; its latest requests."""
    case = case_get_for(request.user, pk)
    filters = PacketListFilter(request.GET or None, queryset=packets_of_case(case))
    return render(
        request,
        "packets/packet_list.html",
        {
            "case": case,
            "filters": filters,
            "page": filtered_page(request, filters, default=("-created_at",), tiebreak="-pk"),
            "requests": packet_requests_of_case(case)[:20],
            "deliverables": [
                DocumentKind(kind)
                for kind in kinds_issuable_by(request.user)
                if kind != DocumentKind.PACKET
            ],
        },
    )


@role_required("packets.add_packetrequest")
@require_http_methods(["GET", "POST"])
def packet_request(request: HttpRequest, pk: int) -> HttpResponse:
    """Issue the whole-case packet or a deliverable (``?kind=`` picks one), in a language."""
    case = case_get_for(request.user, pk)
    kinds = kinds_issuable_by(request.user)
    asked = request.GET.get("kind")
    kind = asked if asked in kinds else DocumentKind.PACKET
    form = PacketRequestForm(
        request.POST if request.method == "POST" else None,
        initial={"language": packet_language(None), "kind": kind},
        kinds=kinds,
    )
    if request.method == "POST" and form.is_valid():
        try:
            packet_request = packet_request_create(
                actor=request.user,
                case=case,
                language=form.cleaned_data["language"] or None,
                kind=form.cleaned_data["kind"] or None,
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            return redirect("packets:status", pk=packet_request.pk)
    return render(
        request,
        "packets/packet_request.html",
        {"case": case, "form": form, "kind": DocumentKind(kind)},
    )


@role_required("packets.view_auditpacket")
def packet_status(request: HttpRequest, pk: int) -> HttpResponse:
    packet_request = packet_request_get_for(request.user, pk)
    return render(
        request,
        "packets/packet_status.html",
        {
            "case": packet_request.case,
            "packet_request": packet_request,
            "packet": getattr(packet_request, "packet", None),
            "refresh_seconds": None if packet_request.finished else REFRESH_SECONDS,
        },
    )


@role_required("packets.view_auditpacket")
def packet_download(request: HttpRequest, pk: int) -> HttpResponse | FileResponse:
    return stored_file_response(request, packet_stored_file(packet_get_for(request.user, pk)))


UPLOAD_POLICY = UploadPolicy(
    lambda: MAX_UPLOAD_BYTES, length_required=True, too_large=lambda _limit: too_large_message()
)


def _upload_refusal(request: HttpRequest) -> HttpResponse | None:
    return UPLOAD_POLICY.refuse(request, _refused)


@refused_unread(_upload_refusal)  # before the CSRF check reads the body
@role_required("packets.view_auditpacket")
@require_http_methods(["GET", "POST"])
def packet_verify(request: HttpRequest) -> HttpResponse:
    result = None
    if request.method == "POST" and (refusal := _upload_refusal(request)):
        return refusal
    form = PacketVerifyForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        result = verify_packet_bytes(form.cleaned_data["file"].read())
        form = PacketVerifyForm()
    return render(
        request,
        "packets/packet_verify.html",
        {"form": form, "result": result, "title": _("Verify a packet")},
    )


def _refused(request: HttpRequest, message: str, *, status: int) -> HttpResponse:
    return render(
        request,
        "packets/packet_verify.html",
        {"form": PacketVerifyForm(), "upload_error": message, "title": _("Verify a packet")},
        status=status,
    )
