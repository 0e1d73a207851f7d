"""The clause checklist template list's filters and sort order, read from the URL."""

import django_filters
from django.contrib.auth import get_user_model
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from apps.contracts.models import ChecklistTemplate, TemplateItem


class TemplateListFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(label=_("Note or clauses contain"), method="by_words")
    published_by = django_filters.ModelChoiceFilter(
        label=_("Published by"),
        queryset=get_user_model()
        .objects.filter(pk__in=ChecklistTemplate.objects.values("published_by_id"))
        .order_by("username"),
        empty_label=_("Anyone"),
    )
    sort = django_filters.OrderingFilter(
        fields=(
            ("number", "version"),
            ("published_by__username", "by"),
            ("created_at", "published"),
            ("checklist_count", "checklists"),
        ),
    )

    class Meta:
        model = ChecklistTemplate
        fields: list[str] = []

    def by_words(self, queryset, _name, value):
        words = value.strip()
        if not words:
            return queryset
        # Through the clauses by id, so a version with several matching clauses is one row.
        clauses = TemplateItem.objects.filter(
            Q(title__icontains=words) | Q(key__icontains=words) | Q(guidance__icontains=words)
        ).values("template_id")
        return queryset.filter(Q(note__icontains=words) | Q(pk__in=clauses))
