"""The vendor list's filters and sort order, read from the URL (django-filter)."""

import django_filters
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from apps.vendors.models import Vendor


class VendorListFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(label=_("Name or regions contain"), method="by_words")
    jurisdiction = django_filters.CharFilter(label=_("Jurisdiction"), lookup_expr="icontains")
    sort = django_filters.OrderingFilter(
        fields=(
            ("name", "name"),
            ("jurisdiction", "jurisdiction"),
            ("offer_count", "offers"),
        ),
    )

    class Meta:
        model = Vendor
        fields: list[str] = []

    def by_words(self, queryset, _name, value):
        words = value.strip()
        if not words:
            return queryset
        return queryset.filter(Q(name__icontains=words) | Q(regions__icontains=words))
