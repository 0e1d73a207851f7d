from django.core.management.base import BaseCommand, CommandError

from apps.audit.export_check import verify_export


class Command(BaseCommand):
    help = "Check a case export: manifest signature, every file's digest, nothing missing or extra."

    def add_arguments(self, parser):
        parser.add_argument("file")

    def handle(self, *args, file, **options):
        try:
            handle = open(file, "rb")  # noqa: SIM115 - closed below, after the check
        except OSError as error:
            raise CommandError(f"Cannot open {file}: {error}") from None
        with handle:
            check = verify_export(handle)
        if check.signature and check.signature.signer_subject:
            self.stdout.write(f"signed by: {check.signature.signer_subject}")
            self.stdout.write(f"signer certificate SHA-256: {check.signature.signer_fingerprint}")
        if check.valid:
            self.stdout.write(
                self.style.SUCCESS(
                    f"export valid: case {check.case}, {check.files_checked} files match the "
                    "signed manifest"
                )
            )
            return
        self.stderr.write(self.style.ERROR(f"export INVALID: {len(check.problems)} problem(s)"))
        for problem in check.problems:
            self.stderr.write(f"  {problem}")
        raise SystemExit(1)
