"""The harness as one file, built from the repository's own harness sources.

Built in memory (the same layout as harness/build_zipapp.py: the package plus
a ``__main__`` that calls the CLI), cached per process, so the download is
always the harness this server's schema came from.
"""

import hashlib
import io
import zipfile
from functools import cache
from pathlib import Path

from django.conf import settings

SHEBANG = b"#!/usr/bin/env python3\n"
MAIN = "from diligence_harness.cli import _zipapp_main\n_zipapp_main()\n"


def package_dir() -> Path:
    return Path(settings.BASE_DIR) / "harness" / "diligence_harness"


@cache
def build() -> tuple[bytes, str]:
    """(bytes of diligence-harness.pyz, its SHA-256)."""
    buffer = io.BytesIO()
    root = package_dir()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("__main__.py", MAIN)
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                relative = path.relative_to(root.parent).as_posix()
                archive.writestr(
                    zipfile.ZipInfo(relative, (1980, 1, 1, 0, 0, 0)), path.read_bytes()
                )
    data = SHEBANG + buffer.getvalue()
    return data, hashlib.sha256(data).hexdigest()
