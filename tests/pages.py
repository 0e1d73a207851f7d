"""Reading a case as a reviewer does: the cockpit, then each of its parts."""

import re
from types import SimpleNamespace

from django.urls import reverse


def whole_case(client, pk: int, **headers) -> SimpleNamespace:
    """The case cockpit followed by every area page its tab bar links to, as one page.

    Details that used to sit on one long case page now sit one click away, on
    the area pages; a test that looks for them reads all of them, as a reviewer
    clicking through the tabs would. Each page must answer 200.
    """
    cockpit = client.get(reverse("cases:detail", args=[pk]), **headers)
    if cockpit.status_code != 200:
        return SimpleNamespace(status_code=cockpit.status_code, content=cockpit.content)
    parts = [cockpit.content]
    prefix = reverse("cases:area", args=[pk, "AREA"]).replace("AREA/", "")
    for area in dict.fromkeys(
        re.findall(rf'href="{re.escape(prefix)}([a-z-]+)/"', cockpit.content.decode())
    ):
        page = client.get(reverse("cases:area", args=[pk, area]), **headers)
        assert page.status_code == 200, (area, page.status_code)
        parts.append(page.content)
    return SimpleNamespace(status_code=200, content=b"\n".join(parts))
