"""Comments are records: the admin reads them and changes none (they are never edited)."""

from django.contrib import admin

from apps.comments.models import Comment
from apps.core.admin import RecordAdmin


@admin.register(Comment)
class CommentAdmin(RecordAdmin):
    list_display = ("title", "author", "created_at", "for_the_record")
    list_select_related = ("author",)
    list_filter = ("for_the_record",)
    search_fields = ("title", "body")
