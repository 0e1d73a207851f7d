"""A stand-in for an evidence app's packet section: one stored file and its recorded digest."""

import hashlib

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from apps.core.contributions import PacketSection

BUNDLE_BYTES = b'{"harness": "0.1", "rounds": 3}'
BUNDLE_SHA256 = hashlib.sha256(BUNDLE_BYTES).hexdigest()


def store_bundle() -> str:
    return default_storage.save("evidence/bundle-1.json", ContentFile(BUNDLE_BYTES))


def packet_section(case):
    return PacketSection(
        title="Evidence and spec verification",
        template="packets/sections/specs.html",
        context={"offers": []},
        manifest_files=[("bundle-1.json", "evidence/bundle-1.json", BUNDLE_SHA256)],
    )
