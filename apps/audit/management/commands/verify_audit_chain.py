from django.core.management.base import BaseCommand

from apps.audit.services import chain_verification_run


class Command(BaseCommand):
    help = (
        "Check the hash chain over every history row; name the first broken row. "
        "Exits 0 when intact, 1 when not."
    )

    def handle(self, *args, **options):
        record, report = chain_verification_run()
        if report.intact:
            self.stdout.write(
                self.style.SUCCESS(f"chain intact: {report.rows} rows, head {report.head_hash}")
            )
            return
        first = report.first_problem
        self.stderr.write(
            self.style.ERROR(
                f"chain BROKEN: {report.problem_count} problem(s) in {report.rows} rows; "
                f"first broken row — {first.describe()}"
            )
        )
        for problem in sorted(report.problems, key=lambda p: (p.seq is None, p.seq or 0))[1:10]:
            self.stderr.write(f"  also: {problem.describe()}")
        raise SystemExit(1)
