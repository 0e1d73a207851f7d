"""What a domain app hands the whole-case layer: a case page panel, a packet chapter,
a dashboard section.

The apps build these and the whole-case layer (``apps.casework``) lists the apps
and puts their pieces together, so a contributing app imports only this module,
never the one that collects it.
"""

from dataclasses import dataclass, field
from datetime import datetime


class MissingLine(str):
    """One line of what an area lacks, with the page where that one thing is mended
    (``""``: the area's own form). It reads, compares and joins as the plain sentence.

    ``offer_id`` names the offer the line is about (None: the whole case): once a case
    is decided, the lines about the offers it did not approve close."""

    url: str = ""
    offer_id: int | None = None

    def __new__(cls, text: str, url: str = "", offer_id: int | None = None) -> "MissingLine":
        line = super().__new__(cls, text)
        line.url = url
        line.offer_id = offer_id
        return line


@dataclass
class CasePanel:
    """One section of the case page: a template, its context, and what is missing.

    ``valid_until``: when what the panel shows depends on the time of day (a
    verification that ages past its limit), the instant it stops being true;
    the case page does not show a stored standing of the panel after it.

    On the case cockpit each panel is one area's tile: ``area`` names it (its
    details page is ``/cases/<pk>/area/<area>/``), ``fix_url`` is the page where
    what is missing gets mended and ``fix_permission`` the permission that page's
    form needs (the tile names the roles holding it). ``started`` is false while
    the area's main record does not exist yet.
    """

    title: str
    template: str
    context: dict = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    order: int = 100
    valid_until: datetime | None = None
    area: str = ""
    fix_url: str = ""
    fix_permission: str = ""
    started: bool = True


@dataclass
class PacketSection:
    """One chapter of the packet: a template rendered with ``section`` and its context."""

    title: str
    template: str
    context: dict = field(default_factory=dict)
    order: int = 100
    manifest_files: list[tuple[str, str, str]] = field(default_factory=list)
    history_querysets: list = field(default_factory=list)
    # Printed right after the cover, before the contents (the executive summary), in the
    # front matter rather than as a chapter laid out on its own.
    after_cover: bool = False
    number: int = 0  # the chapter's number, set as the packet is put together
    anchor: str = ""
    html: str = ""  # the rendered chapter, set as the packet is put together


@dataclass
class Item:
    """One line of a dashboard section: what waits, and where it is done."""

    title: str
    detail: str
    url: str
    tone: str = "warn"


@dataclass
class Section:
    """One section of the role dashboard."""

    title: str
    items: list[Item] = field(default_factory=list)
    # False for what is only to be read (recent decisions): not counted as waiting work.
    todo: bool = True
