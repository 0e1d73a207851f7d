"""The packet list's filter and sort order, read from the URL (django-filter)."""

import django_filters
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _

from apps.packets.models import AuditPacket, DocumentKind, kind_filter


class PacketListFilter(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(
        label=_("Document"),
        choices=DocumentKind.choices,
        method="filter_kind",
        empty_label=_("Any document"),
    )
    issued_by = django_filters.ModelChoiceFilter(
        label=_("Issued by"),
        queryset=get_user_model()
        .objects.filter(pk__in=AuditPacket.objects.values("issued_by_id"))
        .order_by("username"),
        empty_label=_("Anyone"),
    )
    sort = django_filters.OrderingFilter(
        fields=(
            ("number", "packet"),
            ("created_at", "issued"),
            ("issued_by__username", "by"),
            ("page_count", "pages"),
        )
    )

    class Meta:
        model = AuditPacket
        fields: list[str] = []

    def filter_kind(self, queryset, name: str, value: str):
        return queryset.filter(kind_filter(value, prefix="request__"))
