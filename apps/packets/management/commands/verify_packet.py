from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import translation

from apps.packets.verification import verify_packet_bytes


class Command(BaseCommand):
    help = (
        "Check a PDF: intact signature over the whole file by this system's key, "
        "byte-identical to an issued packet, and every attached file as its manifest lists it. "
        "Exit status 0 only when all hold."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)

    def handle(self, *args, file: Path, **options):
        try:
            content = file.read_bytes()
        except OSError as error:
            raise CommandError(f"Cannot read {file}: {error.strerror}") from None
        result = verify_packet_bytes(content)
        yes_no = {True: "yes", False: "NO"}
        self.stdout.write(f"file:                 {file.name} ({result.size_bytes} bytes)")
        self.stdout.write(f"sha256:               {result.sha256}")
        self.stdout.write(f"signature intact:     {yes_no[result.intact]}")
        self.stdout.write(f"covers whole file:    {yes_no[result.covers_whole_document]}")
        self.stdout.write(f"signed by our key:    {yes_no[result.trusted]}")
        self.stdout.write(f"signer:               {result.signer_subject or '-'}")
        signed = result.signing_time.isoformat() if result.signing_time else "-"
        self.stdout.write(f"signed at:            {signed}")
        issued = result.issued_packet.number if result.issued_packet else "none"
        self.stdout.write(f"issued packet:        {issued}")
        if result.issued_packet is not None:
            with translation.override("en"):
                document = str(result.issued_packet.document_kind.label)
            self.stdout.write(f"document:             {document}")
        matching = sum(1 for check in result.attachments if check.status == "ok")
        self.stdout.write(
            f"attached files:       {matching} of {len(result.attachments)} match the manifest"
            f" ({yes_no[result.attachments_ok]})"
        )
        for check in result.attachments:
            self.stdout.write(f"  {check.status:<10}          {check.name}")
        for problem in result.problems:
            self.stdout.write(f"problem:              {problem}")
        if not result.valid:
            raise CommandError("NOT VALID: this file is not an unchanged packet issued here.")
        self.stdout.write(self.style.SUCCESS(f"VALID: packet {issued}, unchanged."))
