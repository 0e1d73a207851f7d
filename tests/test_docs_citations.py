"""Every ``docs/…`` page and anchor the code and the docs cite exists.

Comments carry the reason for a rule by citing the page of ``docs/`` that states
it (``# docs/rules/evidence.md#memory-check: …``). A page renamed or a heading
reworded would leave such a citation pointing at nothing; this reads them all.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CITATION = re.compile(r"docs/[\w./-]+?\.md(?:#[\w-]+)?")
SOURCES = ("apps", "config", "harness", "templates", "tests", "benchmarks", "scripts", "docs")
SUFFIXES = {".py", ".html", ".md", ".txt"}


def _slug(heading: str) -> str:
    """The anchor a Markdown renderer gives a heading (GitHub's rule)."""
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    found = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"#+\s+(.*)", line)
        if heading:
            found.add(_slug(heading.group(1)))
        found.update(re.findall(r'<a (?:id|name)="([\w-]+)"', line))
    return found


def _citations():
    files = [ROOT / "README.md"]
    for folder in SOURCES:
        files += [
            path
            for path in (ROOT / folder).rglob("*")
            if path.suffix in SUFFIXES and "migrations" not in path.parts
        ]
    for path in files:
        for citation in CITATION.findall(path.read_text(encoding="utf-8", errors="ignore")):
            yield path.relative_to(ROOT), citation


def test_every_cited_page_and_anchor_exists():
    broken = []
    cited = 0
    for source, citation in _citations():
        cited += 1
        page, _, anchor = citation.partition("#")
        if not (ROOT / page).is_file():
            broken.append(f"{source}: {citation} (no such page)")
        elif anchor and anchor not in _anchors(ROOT / page):
            broken.append(f"{source}: {citation} (no such heading)")
    assert cited > 100  # the comments do cite the docs
    assert not broken, "\n".join(broken)


def test_the_slug_is_the_headings_anchor():
    assert _slug("Memory check") == "memory-check"
    assert _slug("2.1 Sizing (inference)") == "21-sizing-inference"
