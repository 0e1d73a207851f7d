"""Writes: a set's upload (read whole before anything is stored) and a plan's required sets."""

import uuid

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext as _

from apps.core.services import tracked_create, tracked_update
from apps.workloads import rules
from apps.workloads.models import PlanWorkload, SetKind, WorkloadSet

CHUNK_BYTES = 256 * 1024


def set_max_bytes() -> int:
    return settings.WORKLOAD_SET_MAX_BYTES


class SetRefusedError(ValidationError):
    """A set refused line by line: ``refusals`` lists them, ``total`` counts them all."""

    def __init__(self, refused: rules.SetRefused) -> None:
        self.refusals = refused.refusals
        self.total = refused.total
        shown = len(refused.refusals)
        message = _("The set was refused, nothing was stored: %(n)s problem(s).") % {
            "n": f"{refused.total:,}"
        }
        if refused.total > shown:
            message += " " + _("The first %(shown)s are listed.") % {"shown": f"{shown:,}"}
        super().__init__({"file": [message]})


def _chunks(upload):
    upload.seek(0)
    while chunk := upload.read(CHUNK_BYTES):
        yield chunk


def workload_set_upload(*, actor, case, kind: str, name: str, upload) -> WorkloadSet:
    """Read the whole set, then store it as the next version of ``name``.

    The set is read twice from the uploaded file (on disk past a few megabytes), once to
    check every line and once to store it, so no step holds it in memory. Any refusal
    stores nothing.
    """
    if not actor.has_perm("workloads.add_workloadset"):
        raise PermissionDenied(_("Only a tech lead uploads a workload set."))
    if kind not in SetKind.values:
        raise ValidationError({"kind": _("Choose a prompt set or a core sample set.")})
    name = (name or "").strip()
    if not name:
        raise ValidationError({"name": _("Give the set a name.")})
    limit = set_max_bytes()
    size = getattr(upload, "size", None)
    if size is not None and size > limit:
        raise ValidationError(
            {"file": _("The set is larger than %(limit)s.") % {"limit": filesizeformat(limit)}}
        )
    try:
        summary = rules.read_set(kind, _chunks(upload), max_bytes=limit)
    except rules.SetRefused as refused:
        raise SetRefusedError(refused) from None
    held = WorkloadSet.objects.filter(case=case, kind=kind, sha256=summary.sha256).first()
    if held is not None:
        raise ValidationError(
            {"file": _("This case already holds these exact bytes as %(set)s.") % {"set": held}}
        )
    saved = None
    try:
        with transaction.atomic():
            upload.seek(0)
            saved = default_storage.save(f"workloads/{case.pk}/{uuid.uuid4().hex}.jsonl", upload)
            newest = WorkloadSet.objects.filter(case=case, kind=kind, name=name).aggregate(
                top=Max("set_version")
            )["top"]
            workload_set = tracked_create(
                WorkloadSet,
                actor=actor,
                reason=f"Uploaded {SetKind(kind).label} {name}",
                case=case,
                kind=kind,
                name=name,
                set_version=(newest or 0) + 1,
                sha256=summary.sha256,
                size_bytes=summary.size_bytes,
                item_count=summary.item_count,
                statistics=summary.statistics,
                storage_name=saved,
                uploaded_by=actor,
            )
    except IntegrityError:
        # Two uploads of the same name at once: the second one is sent again.
        if saved:
            default_storage.delete(saved)
        raise ValidationError(
            {"name": _("Another version of this set was stored meanwhile; upload it again.")}
        ) from None
    except BaseException:
        if saved:
            default_storage.delete(saved)
        raise
    return workload_set


def _check_set(plan, workload_set: WorkloadSet | None, kind: str, field: str) -> None:
    if workload_set is None:
        return
    if workload_set.case_id != plan.case_id or workload_set.kind != kind:
        raise ValidationError({field: _("Choose a set of this case, of the right kind.")})


def plan_workload_set(
    *, actor, plan, prompt_set: WorkloadSet | None, sample_set: WorkloadSet | None
) -> PlanWorkload:
    """Name the case's sets the plan requires (none: the plan requires none)."""
    if not actor.has_perm("workloads.change_planworkload"):
        raise PermissionDenied(_("Only a tech lead names the sets an acceptance requires."))
    _check_set(plan, prompt_set, SetKind.PROMPTS, "prompt_set")
    _check_set(plan, sample_set, SetKind.SAMPLES, "sample_set")
    with transaction.atomic():
        current = PlanWorkload.objects.select_for_update().filter(plan=plan).first()
        if current is None:
            return tracked_create(
                PlanWorkload,
                actor=actor,
                reason="Required sets named",
                plan=plan,
                prompt_set=prompt_set,
                sample_set=sample_set,
                set_by=actor,
            )
        return tracked_update(
            current,
            actor=actor,
            reason="Required sets changed",
            fields={"prompt_set": prompt_set, "sample_set": sample_set, "set_by": actor},
        )
