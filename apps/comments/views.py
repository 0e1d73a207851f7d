"""A record's thread: read it, add to it, mark what was said to you as read."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Model
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.cases.models import ProcurementCase
from apps.comments import services
from apps.comments.forms import CommentForm
from apps.comments.models import Comment
from apps.comments.selectors import thread_of
from apps.comments.targets import Target, target_named, target_of
from apps.core.access import MissingPermission, role_required
from apps.core.forms import apply_service_errors
from apps.core.links import return_to


def _readable(request: HttpRequest, kind: str, pk: int) -> tuple[Target, Model]:
    target = target_named(kind)
    if not request.user.has_perm(target.view_permission):
        raise MissingPermission(target.view_permission)
    return target, target.get(pk)


def _back(request: HttpRequest, default: str) -> str:
    return return_to(request) or default


@role_required("comments.view_comment")
def thread(request: HttpRequest, kind: str, pk: int) -> HttpResponse:
    target, record = _readable(request, kind, pk)
    here = reverse("comments:thread", args=[kind, pk])
    form = CommentForm(request.POST or None)
    if request.method == "POST":
        if not services.may_comment(request.user, target):
            raise MissingPermission("comments.add_comment")
        if form.is_valid():
            try:
                comment = services.comment_add(
                    actor=request.user, record=record, **form.cleaned_data
                )
            except ValidationError as error:
                apply_service_errors(form, error)
            else:
                messages.success(request, _("Comment added."))
                return redirect(f"{_back(request, here)}#comment-{comment.pk}")
    return render(
        request,
        "comments/thread.html",
        {
            "target": target,
            "record": record,
            "record_name": target.name(record),
            "record_url": target.page(record),
            "case": ProcurementCase.objects.only("name").get(pk=target.case_id(record)),
            "comments": thread_of(record),
            "form": form,
            "may_comment": services.may_comment(request.user, target),
            "unread": services.unread_on(request.user, record),
            "kind": kind,
        },
        status=400 if request.method == "POST" else 200,
    )


@require_POST
@role_required("comments.view_comment")
def mark_read(request: HttpRequest, kind: str, pk: int) -> HttpResponse:
    _target, record = _readable(request, kind, pk)
    services.mentions_read(request.user, record)
    messages.success(request, _("Marked as read."))
    return redirect(_back(request, reverse("comments:thread", args=[kind, pk])))


@role_required("comments.view_comment")
def comment_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Where a mention's e-mail points: the comment in its thread."""
    comment = get_object_or_404(Comment.objects.select_related("target_type"), pk=pk)
    record = comment.target
    if record is None:
        raise Http404
    target = target_of(record)
    if not request.user.has_perm(target.view_permission):
        raise MissingPermission(target.view_permission)
    return redirect(reverse("comments:thread", args=[target.kind, record.pk]) + f"#comment-{pk}")
