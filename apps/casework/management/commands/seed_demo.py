from django.core.management.base import BaseCommand

from apps.casework.demo import DEMO_PASSWORD, DEMO_USERS, seed_demo


class Command(BaseCommand):
    help = "Load the demo case, vendors, offers and one user per role (idempotent)."

    def handle(self, *args, **options):
        case = seed_demo()
        self.stdout.write(self.style.SUCCESS(f"Demo case #{case.pk}: {case.name}"))
        for username, _first, _last, role in DEMO_USERS:
            self.stdout.write(f"  {username:<6} {role.label:<22} password: {DEMO_PASSWORD}")
