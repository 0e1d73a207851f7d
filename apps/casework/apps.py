from django.apps import AppConfig

from apps.packets.composition import PacketComposer, set_composer


class CaseworkConfig(AppConfig):
    """What is about the whole case: its page and standing, the work lists, the packet's
    chapters, the offer matrix, search and the demo; above every domain app."""

    name = "apps.casework"
    label = "casework"

    def ready(self) -> None:
        # Every tracked write raises the mark of the cases it touches (connected there).
        from apps.casework import standing  # noqa: F401
        from apps.casework.packet import chapters

        # Issuing a packet asks the layer for its chapters (docs/layers.md).
        set_composer(
            PacketComposer(
                document_sections=chapters.document_sections,
                has_chapters=chapters.document_has_chapters,
            )
        )
