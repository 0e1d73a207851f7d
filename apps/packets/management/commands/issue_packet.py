from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.storage import default_storage
from django.core.management.base import BaseCommand, CommandError

from apps.cases.models import ProcurementCase
from apps.cases.selectors import case_list_for
from apps.core.storage import storage_location
from apps.packets.models import DocumentKind, PacketRequest
from apps.packets.services import packet_request_create
from apps.packets.tasks import issue_packet_task


class Command(BaseCommand):
    help = (
        "Issue a signed audit packet for a case, with the same task and checks as the browser, "
        "and print where it is stored."
    )

    def add_arguments(self, parser):
        parser.add_argument("case_id", type=int)
        parser.add_argument(
            "--user",
            help="Username the packet is issued by (default: the case owner); "
            "needs the permission to request packets.",
        )
        parser.add_argument(
            "--language",
            choices=[code for code, _name in settings.LANGUAGES],
            default=settings.LANGUAGE_CODE,
            help="The language the packet is written in (default: %(default)s).",
        )
        parser.add_argument(
            "--kind",
            choices=DocumentKind.values,
            default=DocumentKind.PACKET,
            help="The whole-case packet (default) or one deliverable issued on its own; "
            "a deliverable needs the permission of the role that owns its area.",
        )

    def handle(self, *args, case_id, user=None, language=None, kind=None, **options):
        actor = self._actor(case_id, user)
        case = case_list_for(actor).filter(pk=case_id).first()
        if case is None:
            raise CommandError(f"No case #{case_id} visible to {actor.get_username()}.")
        try:
            packet_request = packet_request_create(
                actor=actor, case=case, queue=False, language=language, kind=kind
            )
        except (PermissionDenied, ValidationError) as error:
            raise CommandError("; ".join(_messages(error))) from None
        # Run here rather than on a worker, so the command can say where the packet is.
        issue_packet_task.apply(args=(packet_request.pk,))
        packet_request.refresh_from_db()
        if packet_request.status != PacketRequest.Status.DONE:
            raise CommandError(f"Packet {packet_request.number} failed: {packet_request.error}")
        packet = packet_request.packet
        stored = packet.file.name
        assert stored is not None  # an issued packet always has its file
        self.stdout.write(self.style.SUCCESS(f"Issued {packet.number} for case #{case.pk}"))
        self.stdout.write(f"  stored:  {stored} ({_location(stored)})")
        self.stdout.write(f"  sha256:  {packet.sha256}")
        self.stdout.write(f"  size:    {packet.size_bytes} bytes, {packet.page_count} pages")
        self.stdout.write(f"  signer:  {packet.signer_subject}")

    def _actor(self, case_id: int, username: str | None):
        User = get_user_model()
        if username:
            actor = User.objects.filter(username=username).first()
            if actor is None:
                raise CommandError(f"No user named {username!r}.")
        else:
            case = ProcurementCase.objects.select_related("owner").filter(pk=case_id).first()
            if case is None:
                raise CommandError(f"No case #{case_id}.")
            actor = case.owner
        if not actor.has_perm("packets.add_packetrequest"):
            raise CommandError(
                str(PermissionDenied(f"{actor.get_username()} may not request packets."))
            )
        return actor


def _messages(error: Exception) -> list[str]:
    if isinstance(error, ValidationError):
        return [str(message) for message in error.messages]
    return [str(error)]


def _location(name: str) -> str:
    # A path on disk, or the bucket and key: never a URL, which would bypass the downloads.
    return storage_location(default_storage, name)
