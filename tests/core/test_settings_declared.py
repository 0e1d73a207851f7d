"""Every setting the code reads is declared once in config/settings.py and read as settings.X."""

import re
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
READ = re.compile(r"\bsettings\.([A-Z][A-Z0-9_]+)\b")


def _sources():
    for folder in ("apps", "config"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path, path.read_text(encoding="utf-8")


def test_no_setting_is_read_with_a_default_of_its_own():
    found = [str(path) for path, text in _sources() if "getattr(settings" in text]
    assert found == []


def test_every_setting_read_is_declared():
    read = {name for _path, text in _sources() for name in READ.findall(text)}
    missing = sorted(name for name in read if not hasattr(settings, name))
    assert missing == []
