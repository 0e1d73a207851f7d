"""The stored usage-and-bill file of an import, byte for byte, checked against its SHA-256."""

from django.shortcuts import get_object_or_404

from apps.cases.selectors import case_list_for
from apps.core.access import role_required
from apps.core.downloads import StoredFile, stored_file_response
from apps.costs.models import CostImport


def cost_import_get_for(actor, pk: int) -> CostImport:
    # Read here rather than in selectors: the download is this module's only reader.
    if not actor.has_perm("costs.view_costimport"):
        return get_object_or_404(CostImport.objects.none(), pk=pk)
    visible = CostImport.objects.filter(case__in=case_list_for(actor).values("pk"))
    return get_object_or_404(visible, pk=pk)


def cost_import_stored_file(cost_import: CostImport) -> StoredFile:
    json_body = cost_import.source == CostImport.Source.API_JSON
    return StoredFile(
        case_id=cost_import.case_id,
        record=f"Cost import {cost_import.file_name}",
        name=cost_import.storage_name,
        sha256=cost_import.sha256,
        filename=cost_import.file_name,
        content_type="application/json" if json_body else "text/csv",
    )


@role_required("costs.view_costimport")
def cost_import_download(request, pk: int):
    cost_import = cost_import_get_for(request.user, pk)
    return stored_file_response(request, cost_import_stored_file(cost_import))
