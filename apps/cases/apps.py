from django.apps import AppConfig


class CasesConfig(AppConfig):
    name = "apps.cases"
    label = "cases"

    def ready(self) -> None:
        from apps.audit.chain import history_linked
        from apps.cases import standing

        # Every tracked write raises the mark of the cases it touches (same transaction).
        history_linked.connect(standing.on_history_linked, dispatch_uid="cases.standing")
