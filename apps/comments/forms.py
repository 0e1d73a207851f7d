from django import forms
from django.utils.translation import gettext_lazy as _

from apps.comments.models import BODY_MAX_LENGTH


class CommentForm(forms.Form):
    body = forms.CharField(
        label=_("Comment"),
        max_length=BODY_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_(
            "Mention someone with @ and their user name: they are told by e-mail and on "
            "their work list."
        ),
    )
    for_the_record = forms.BooleanField(
        label=_("For the record: print it in the signed audit packet"), required=False
    )
