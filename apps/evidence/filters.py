"""The filters and sort orders of a case's bundle and harness token lists (django-filter)."""

import django_filters
from django.contrib.auth import get_user_model
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from apps.evidence.models import EvidenceBundle, EvidenceUpload, HarnessToken, Verdict
from apps.offers.models import Offer


def _offers_of(case):
    return Offer.objects.filter(case=case).select_related("vendor").order_by("vendor__name", "pk")


class BundleListFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(label=_("SHA-256 or token starts with"), method="by_prefix")
    offer = django_filters.ModelChoiceFilter(
        label=_("Offer"), queryset=Offer.objects.none(), empty_label=_("Any offer")
    )
    verdict = django_filters.ChoiceFilter(
        label=_("Verdict"),
        field_name="verification__verdict",
        choices=Verdict.choices,
        empty_label=_("All"),
    )
    sort = django_filters.OrderingFilter(
        fields=(
            ("received_at", "received"),
            ("offer__vendor__name", "offer"),
            ("run_started_at", "run"),
            ("verification__verdict", "verdict"),
            ("size", "size"),
            ("token__prefix", "token"),
        ),
    )

    class Meta:
        model = EvidenceBundle
        fields: list[str] = []

    def __init__(self, *args, case, **kwargs):
        super().__init__(*args, **kwargs)
        self.filters["offer"].queryset = _offers_of(case)

    def by_prefix(self, queryset, _name, value):
        text = value.strip().rstrip("…").strip()
        if not text:
            return queryset
        return queryset.filter(Q(sha256__istartswith=text) | Q(token__prefix__istartswith=text))


class UploadListFilter(django_filters.FilterSet):
    """The uploads not stored as evidence: being verified, refused or failed."""

    q = django_filters.CharFilter(label=_("SHA-256 or token starts with"), method="by_prefix")
    state = django_filters.ChoiceFilter(
        label=_("State"),
        choices=[
            (value, label)
            for value, label in EvidenceUpload.State.choices
            if value != EvidenceUpload.State.VERIFIED
        ],
        empty_label=_("All"),
    )
    sort = django_filters.OrderingFilter(
        fields=(
            ("received_at", "received"),
            ("state", "state"),
            ("size", "size"),
            ("token__prefix", "token"),
        ),
    )

    class Meta:
        model = EvidenceUpload
        fields: list[str] = []

    def by_prefix(self, queryset, _name, value):
        text = value.strip().rstrip("…").strip()
        if not text:
            return queryset
        return queryset.filter(Q(sha256__istartswith=text) | Q(token__prefix__istartswith=text))


class TokenListFilter(django_filters.FilterSet):
    ACTIVE, EXPIRED, REVOKED = "active", "expired", "revoked"

    q = django_filters.CharFilter(label=_("Prefix or label contain"), method="by_words")
    offer = django_filters.ModelChoiceFilter(
        label=_("Offer"), queryset=Offer.objects.none(), empty_label=_("Any offer")
    )
    state = django_filters.ChoiceFilter(
        label=_("State"),
        choices=((ACTIVE, _("active")), (EXPIRED, _("expired")), (REVOKED, _("revoked"))),
        empty_label=_("All"),
        method="by_state",
    )
    created_by = django_filters.ModelChoiceFilter(
        label=_("Issued by"), queryset=get_user_model().objects.none(), empty_label=_("Anyone")
    )
    sort = django_filters.OrderingFilter(
        fields=(
            ("prefix", "prefix"),
            ("offer__vendor__name", "offer"),
            ("label", "label"),
            ("created_by__username", "by"),
            ("expires_at", "expires"),
            ("last_used_at", "used"),
        ),
    )

    class Meta:
        model = HarnessToken
        fields: list[str] = []

    def __init__(self, *args, case, **kwargs):
        super().__init__(*args, **kwargs)
        self.filters["offer"].queryset = _offers_of(case)
        self.filters["created_by"].queryset = (
            get_user_model()
            .objects.filter(pk__in=HarnessToken.objects.filter(case=case).values("created_by_id"))
            .order_by("username")
        )

    def by_words(self, queryset, _name, value):
        words = value.strip().rstrip("…").strip()
        if not words:
            return queryset
        return queryset.filter(Q(prefix__icontains=words) | Q(label__icontains=words))

    def by_state(self, queryset, _name, value):
        now = timezone.now()
        if value == self.REVOKED:
            return queryset.filter(revoked_at__isnull=False)
        if value == self.EXPIRED:
            return queryset.filter(revoked_at__isnull=True, expires_at__lte=now)
        if value == self.ACTIVE:
            return queryset.filter(revoked_at__isnull=True, expires_at__gt=now)
        return queryset
