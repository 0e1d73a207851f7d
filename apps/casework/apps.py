from django.apps import AppConfig


class CaseworkConfig(AppConfig):
    """What is about the whole case: its page and standing, the work lists, the packet's
    chapters, the offer matrix, search and the demo; above every domain app."""

    name = "apps.casework"
    label = "casework"

    def ready(self) -> None:
        # Every tracked write raises the mark of the cases it touches (connected there).
        from apps.casework import standing  # noqa: F401
