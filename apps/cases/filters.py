"""The case list's filters and sort order, read from the URL (django-filter)."""

import django_filters
from django.contrib.auth import get_user_model
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from apps.cases.models import ProcurementCase


class CaseListFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(label=_("Name or requirements contain"), method="by_words")
    status = django_filters.ChoiceFilter(
        label=_("Status"), choices=ProcurementCase.Status.choices, empty_label=_("All")
    )
    workload = django_filters.ChoiceFilter(
        label=_("Workload"), choices=ProcurementCase.Workload.choices, empty_label=_("All")
    )
    owner = django_filters.ModelChoiceFilter(
        label=_("Owner"),
        queryset=get_user_model().objects.filter(owned_cases__isnull=False).distinct(),
        empty_label=_("Anyone"),
    )
    sort = django_filters.OrderingFilter(
        fields=(
            ("name", "name"),
            ("status", "status"),
            ("workload", "workload"),
            ("offer_count", "offers"),
            ("owner__username", "owner"),
            ("created_at", "opened"),
        ),
    )

    class Meta:
        model = ProcurementCase
        fields: list[str] = []

    def by_words(self, queryset, _name, value):
        words = value.strip()
        if not words:
            return queryset
        return queryset.filter(Q(name__icontains=words) | Q(requirements__icontains=words))
