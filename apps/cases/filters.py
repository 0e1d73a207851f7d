"""The case list's filters and sort order, read from the URL (django-filter)."""

import django_filters
from django.apps import apps as django_apps
from django.contrib.auth import get_user_model
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from apps.cases.models import ProcurementCase

# The decision in force that approved an offer, read through the case's relations by
# name (the approvals app sits above this one).
_APPROVED_IN_FORCE = {"approvals__decision": "approved", "approvals__superseded_at__isnull": True}


def _vendors(_request):
    return django_apps.get_model("vendors", "Vendor").objects.order_by("name")


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
    opened_after = django_filters.DateFilter(
        label=_("Opened on or after"), field_name="created_at", lookup_expr="date__gte"
    )
    opened_before = django_filters.DateFilter(
        label=_("Opened on or before"), field_name="created_at", lookup_expr="date__lte"
    )
    vendor = django_filters.ModelChoiceFilter(
        label=_("Chosen offer's vendor"),
        queryset=_vendors,
        empty_label=_("Any"),
        method="by_chosen_vendor",
    )
    country = django_filters.CharFilter(
        label=_("Chosen offer's vendor jurisdiction"), method="by_chosen_country"
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

    def by_chosen_vendor(self, queryset, _name, value):
        return _by_chosen(queryset, {"vendor": value})

    def by_chosen_country(self, queryset, _name, value):
        words = value.strip()
        if not words:
            return queryset
        return _by_chosen(queryset, {"vendor__jurisdiction__iexact": words})


def _by_chosen(queryset, lookup: dict):
    """The cases whose chosen offer matches ``lookup`` (on the offer): the offer the
    decision in force approved, else the one the case's budget picked, as the case's
    costs read it."""
    on = {f"approvals__offer__{key}": value for key, value in lookup.items()}
    approved = ProcurementCase.objects.filter(**_APPROVED_IN_FORCE, **on).values("pk")
    decided = ProcurementCase.objects.filter(**_APPROVED_IN_FORCE).values("pk")
    picked = Q(**{f"budget__offer__{key}": value for key, value in lookup.items()})
    return queryset.filter(Q(pk__in=approved) | (picked & ~Q(pk__in=decided)))
