from django.apps import AppConfig
from django.db.models.signals import post_migrate, pre_migrate
from django.utils.translation import gettext_lazy as _


class AuditConfig(AppConfig):
    name = "apps.audit"
    label = "audit"
    verbose_name = _("Audit trail")

    def ready(self) -> None:
        from simple_history.signals import post_create_historical_record

        from apps.audit import chain, triggers

        # Every history row is linked into the chain in the transaction that writes it.
        post_create_historical_record.connect(
            chain.on_history_created, dispatch_uid="audit.chain_history_row"
        )
        pre_migrate.connect(
            chain.remember_history_watermarks, sender=self, dispatch_uid="audit.watermarks"
        )
        post_migrate.connect(
            chain.link_rows_written_by_migrations, sender=self, dispatch_uid="audit.adopt"
        )
        post_migrate.connect(
            triggers.install_history_triggers, sender=self, dispatch_uid="audit.triggers"
        )
