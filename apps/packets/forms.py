"""The upload form of the verification page."""

from django import forms
from django.conf import settings
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext_lazy as _

from apps.packets.models import DocumentKind
from apps.packets.verification import PDF_MAGIC

MAX_UPLOAD_BYTES = 50 * 1024 * 1024


def too_large_message() -> str:
    return _("The file is larger than %(limit)s; packets issued by Diligence are smaller.") % {
        "limit": filesizeformat(MAX_UPLOAD_BYTES)
    }


class PacketRequestForm(forms.Form):
    kind = forms.ChoiceField(
        label=_("Document"),
        required=False,  # the whole-case packet, as before documents had kinds
        help_text=_("The whole case, or one deliverable signed on its own."),
    )
    language = forms.ChoiceField(
        label=_("Language of the packet"),
        choices=settings.LANGUAGES,
        required=False,  # a one-click request is written in the page's language
        help_text=_("Every heading, label and generated sentence is written in it."),
    )

    def __init__(self, *args, kinds: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Only the kinds the person may issue are offered.
        kind_field = self.fields["kind"]
        assert isinstance(kind_field, forms.ChoiceField)
        kind_field.choices = [(kind, DocumentKind(kind).label) for kind in kinds]


class PacketVerifyForm(forms.Form):
    file = forms.FileField(
        label=_("Packet (PDF)"),
        help_text=_("Any PDF up to 50 MB. It is checked and then discarded, never stored."),
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > MAX_UPLOAD_BYTES:
            raise forms.ValidationError(too_large_message())
        head = upload.read(1024)
        upload.seek(0)
        if not head.lstrip().startswith(PDF_MAGIC):
            raise forms.ValidationError(_("This file is not a PDF: it does not start with %PDF-."))
        return upload
