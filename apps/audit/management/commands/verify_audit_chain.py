from django.core.management.base import BaseCommand

from apps.audit.services import chain_verification_run
from apps.audit.verification import chain_order


class Command(BaseCommand):
    help = (
        "Check the hash chain over every history row, every live row against its newest "
        "history row, and the chain heads packets and exports recorded; name the first "
        "problem. Exits 0 when intact, 1 when not."
    )

    def handle(self, *args, **options):
        record, report = chain_verification_run()
        if report.intact:
            self.stdout.write(
                self.style.SUCCESS(
                    f"chain intact: {report.rows} rows, head {report.head_hash}; "
                    f"{report.records} live rows match their history; "
                    f"{report.recorded_heads} heads recorded by packets and exports still held"
                )
            )
            return
        first = report.first_problem
        assert first is not None  # a broken chain keeps its problems, the first among them
        self.stderr.write(
            self.style.ERROR(
                f"chain BROKEN: {report.problem_count} problem(s) in {report.rows} rows "
                f"and {report.records} live rows; first broken row — {first.describe()}"
            )
        )
        others = [p for p in sorted(report.problems, key=chain_order) if p is not first]
        for problem in others[:9]:
            self.stderr.write(f"  also: {problem.describe()}")
        raise SystemExit(1)
