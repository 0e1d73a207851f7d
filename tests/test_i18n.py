"""Simplified Chinese (zh-hans): the catalogue is complete and the pages speak it.

The .mo files are build outputs (git-ignored), so the session compiles the
catalogue itself whenever the .mo is missing or older than the .po.
"""

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse
from django.utils import translation

from apps.cases.models import ProcurementCase
from tests.factories import make_case
from tests.pages import whole_case

PO = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
MO = PO.with_suffix(".mo")
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}
PLACEHOLDER = re.compile(r"%\([A-Za-z_][A-Za-z0-9_]*\)[sdrif]|%%")


@pytest.fixture(scope="session", autouse=True)
def _compiled_catalogue():
    if not MO.exists() or MO.stat().st_mtime < PO.stat().st_mtime:
        call_command("compilemessages", locale=["zh_Hans"], ignore_patterns=[".venv"], verbosity=0)
        # A catalogue loaded before the compile would be stale: drop the cache.
        from django.utils.translation import trans_real

        trans_real._translations = {}
        trans_real._default = None
    yield


# --- the catalogue ---------------------------------------------------------------------------


def _unquote(text):
    body = text[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), body)


def parse_po(path):
    """Entries of a .po file as dicts: msgctxt, msgid, msgid_plural, msgstr (list), flags."""
    entries, entry, field = [], None, None

    def flush():
        if entry is not None and "msgid" in entry:
            entries.append(entry)

    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line:
            flush()
            entry, field = None, None
            continue
        if line.startswith("#~"):
            continue  # obsolete entries are not compiled
        if entry is None:
            entry = {"flags": set(), "msgstr": []}
        if line.startswith("#,"):
            entry["flags"] |= {flag.strip() for flag in line[2:].split(",")}
        elif line.startswith("#"):
            continue
        elif line.startswith("msgstr["):
            entry["msgstr"].append(_unquote(line.split(" ", 1)[1]))
            field = ("msgstr", len(entry["msgstr"]) - 1)
        elif line.startswith('"'):
            if field[0] == "msgstr":
                entry["msgstr"][field[1]] += _unquote(line)
            else:
                entry[field[0]] += _unquote(line)
        else:
            keyword, value = line.split(" ", 1)
            if keyword == "msgstr":
                entry["msgstr"].append(_unquote(value))
                field = ("msgstr", 0)
            else:
                entry[keyword] = _unquote(value)
                field = (keyword,)
    flush()
    return entries


@pytest.fixture(scope="module")
def catalogue():
    entries = parse_po(PO)
    assert entries and entries[0]["msgid"] == "", "the .po starts with its header"
    return entries


def test_po_header_declares_one_plural_form(catalogue):
    header = catalogue[0]
    assert "fuzzy" not in header["flags"]
    assert "Plural-Forms: nplurals=1; plural=0;" in header["msgstr"][0]
    assert "charset=UTF-8" in header["msgstr"][0]


def test_po_has_no_untranslated_or_fuzzy_entries(catalogue):
    fuzzy = [e["msgid"] for e in catalogue[1:] if "fuzzy" in e["flags"]]
    untranslated = [
        e["msgid"] for e in catalogue[1:] if not e["msgstr"] or not all(s for s in e["msgstr"])
    ]
    assert not fuzzy, f"{len(fuzzy)} fuzzy entries, e.g. {fuzzy[:5]}"
    assert not untranslated, f"{len(untranslated)} untranslated entries, e.g. {untranslated[:5]}"


def test_po_plurals_have_exactly_one_form(catalogue):
    plurals = [e for e in catalogue[1:] if "msgid_plural" in e]
    assert plurals
    assert all(len(e["msgstr"]) == 1 for e in plurals)


def test_po_keeps_every_placeholder(catalogue):
    def names(text):
        return sorted(set(PLACEHOLDER.findall(text)))

    broken = []
    for e in catalogue[1:]:
        expected = sorted(set(names(e["msgid"])) | set(names(e.get("msgid_plural", ""))))
        expected = (
            [p for p in expected if p != "%%"] if "python-format" not in e["flags"] else expected
        )
        for translated in e["msgstr"]:
            got = names(translated)
            got = [p for p in got if p != "%%"] if "python-format" not in e["flags"] else got
            if got != expected:
                broken.append((e["msgid"], expected, got))
    assert not broken, broken[:5]


def test_po_speaks_the_glossary():
    with translation.override("zh-hans"):
        assert translation.gettext("Procurement cases") == "采购项目"
        assert translation.gettext("Declared spec") == "声明规格"
        assert translation.gettext("Unconfirmed") == "未确认"
        assert translation.gettext("Tech lead") == "技术负责人"
        assert translation.gettext("Legal reviewer") == "法务审核人"
        assert translation.gettext("Audit trail") == "审计轨迹"
        assert translation.gettext("P95 time to first token") == "P95 首字延迟"
        assert translation.ngettext("%(n)s open red flag", "%(n)s open red flags", 3) % {
            "n": 3
        } == ("3 个未关闭的红旗项")


# --- the pages --------------------------------------------------------------------------------


@pytest.fixture
def case(priya):
    case = make_case(priya, name="H200 推理集群")
    ProcurementCase.objects.filter(pk=case.pk).update(
        created_at=datetime(2026, 11, 30, 9, 5, tzinfo=UTC)
    )
    return case


def test_case_list_in_chinese_from_the_browser_language(browser_as, case):
    page = browser_as("priya").get(reverse("cases:list"), **ZH).content.decode()
    assert '<html lang="zh-CN">' in page
    assert "<h1>采购项目</h1>" in page
    assert "新建采购项目" in page
    assert "退出登录" in page
    assert "草稿" in page  # the status choice, translated in the model
    assert "Procurement cases" not in page


def test_case_page_in_chinese_with_a_chinese_date(browser_as, case):
    page = whole_case(browser_as("priya"), case.pk, **ZH).content.decode()
    assert '<html lang="zh-CN">' in page
    for text in ("仍缺少的内容", "服务等级目标（SLO）", "P95 首字延迟", "添加报价", "算力需求"):
        assert text in page, text
    assert "2026年11月30日" in page
    assert "What is still missing" not in page


def test_english_is_the_default_without_a_header(browser_as, case):
    client = browser_as("priya")
    page = client.get(reverse("cases:list")).content.decode()
    assert '<html lang="en">' in page
    assert "<h1>Procurement cases</h1>" in page
    detail = whole_case(client, case.pk).content.decode()
    assert "What is still missing" in detail
    assert "Nov. 30, 2026" in detail


def test_language_switcher_sets_chinese(browser_as, case):
    client = browser_as("priya")
    response = client.post(
        reverse("set_language"), {"language": "zh-hans", "next": reverse("cases:list")}
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("cases:list")
    page = client.get(reverse("cases:list")).content.decode()
    assert '<html lang="zh-CN">' in page
    assert "<h1>采购项目</h1>" in page
    assert 'value="zh-hans" selected' in page


def test_language_switcher_back_to_english_overrides_the_browser(browser_as, case):
    client = browser_as("priya")
    client.post(reverse("set_language"), {"language": "en", "next": reverse("cases:list")})
    page = client.get(reverse("cases:list"), **ZH).content.decode()
    assert '<html lang="en">' in page
    assert "<h1>Procurement cases</h1>" in page


def test_login_page_in_chinese(client, db):
    page = client.get(reverse("login"), **ZH).content.decode()
    assert '<html lang="zh-CN">' in page
    assert "<h1>登录 Diligence</h1>" in page
    assert "用户名" in page  # Django's own catalogue covers the auth form
