from django.core.management.base import BaseCommand, CommandError

from apps.audit.exports import build_case_export
from apps.cases.models import ProcurementCase


class Command(BaseCommand):
    help = "Write the signed auditor export of a case (records, history, evidence, packets)."

    def add_arguments(self, parser):
        parser.add_argument("case_id", type=int)
        parser.add_argument("out", help="path of the ZIP to write")

    def handle(self, *args, case_id, out, **options):
        case = ProcurementCase.objects.filter(pk=case_id).first()
        if case is None:
            raise CommandError(f"No case #{case_id}.")
        manifest = build_case_export(case, out)
        self.stdout.write(
            self.style.SUCCESS(
                f"Exported case #{case.pk} to {out}: {len(manifest['files'])} files, "
                f"chain head {manifest['chain']['head_hash']}"
            )
        )
