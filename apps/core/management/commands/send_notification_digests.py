from django.core.management.base import BaseCommand

from apps.core.notifications import notification_digests_send


class Command(BaseCommand):
    help = (
        "E-mail each person who chose the daily digest of events one e-mail with every event "
        "since their last digest (Celery beat runs it each morning); prints how many were sent."
    )

    def handle(self, *args, **options):
        sent = notification_digests_send()
        self.stdout.write(f"{sent} digest e-mail(s) sent")
