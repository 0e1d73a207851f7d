"""The timeline's record-type filter: one fieldset per area, its name the legend."""

import re

import pytest
from django.urls import reverse

from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = pytest.mark.django_db

AREA = re.compile(r'<fieldset class="record-area"><legend>([^<]+)</legend>(.*?)</fieldset>', re.S)
BOX = re.compile(r'<input type="checkbox" name="record_type" value="([^"]+)"')


def test_the_record_types_are_grouped_by_area(priya, browser_as):
    case = make_case(priya)
    make_offer(priya, case, spec=FULL_SPEC)
    url = reverse("audit:case-timeline", args=[case.pk])
    html = browser_as("aude").get(url).content.decode()

    areas = {legend: BOX.findall(body) for legend, body in AREA.findall(html)}
    assert len(areas) > 10 and all(areas.values())
    # Every box is in an area's fieldset, and in one only.
    grouped = [key for keys in areas.values() for key in keys]
    assert sorted(grouped) == sorted(BOX.findall(html))
    assert len(grouped) == len(set(grouped))
    assert {"offers.offer", "offers.declaredspec"} <= set(areas["Offers"])
    assert {"packets.packetrequest", "packets.auditpacket"} <= set(areas["Packets"])
    assert "cases.procurementcase" in areas["Case"]
    # The area's name is a word a reader knows, never the app's label.
    assert not {"core", "Core", "offers", "packets"} & set(areas)

    # A box checked is still checked once the page comes back filtered.
    filtered = browser_as("aude").get(url, {"record_type": ["offers.offer"]}).content.decode()
    assert 'value="offers.offer" id="id_record_type_' in filtered
    assert re.search(r'value="offers.offer"[^>]*checked', filtered)
