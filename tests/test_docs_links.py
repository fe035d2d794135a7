"""The docs hold together: every link in the README, CHANGELOG and docs/ leads somewhere, every
``docs/*.md`` the code, tests and benches cite exists, the docs index lists every page, and
every long page opens with a table of contents that matches its headings.

Anchors are GitHub's: the heading's text lower-cased, punctuation dropped, spaces as ``-``,
``-1``, ``-2`` for repeats (github-slugger). A table of contents sits between ``<!-- toc -->``
and ``<!-- /toc -->`` and is generated: ``python tests/test_docs_links.py docs/<page>.md ...``
rewrites it from the page's ``##`` and ``###`` headings.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))]
TOC_OVER_LINES = 300  # a page longer than this opens with a table of contents
README_WORDS = 700  # what it is, the two commands, the everyday ones, where to read on
PAGE_WORDS = 6000  # a page is read in one sitting; a longer one is split by question
LEAD_WORDS = 70  # what the page answers: one or two sentences
TOC = re.compile(r"<!-- toc -->\n(?P<body>.*?)<!-- /toc -->\n", re.S)
LINK = re.compile(r"(?<!!)\[(?:[^\]`]|`[^`]*`)*\]\((?P<target>[^)\s]+)\)")
IMAGE = re.compile(r"!\[[^\]]*\]\((?P<target>[^)\s]+)\)")
CITED = re.compile(r"(?<![\w/.-])docs/[\w.-]+\.md\b")


def prose_lines(text: str) -> list[str]:
    """The page's lines outside fenced code blocks."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"`|\*\*|<[^>]+>", "", heading).strip().lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link: its text
    kept = "".join(ch for ch in text
                   if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return kept.replace(" ", "-")


def headings(path: Path) -> list[tuple[int, str, str]]:
    """(level, text, anchor) of every heading, anchors numbered as GitHub numbers repeats."""
    out: list[tuple[int, str, str]] = []
    seen: dict[str, int] = {}
    for line in prose_lines(path.read_text(encoding="utf-8")):
        m = re.match(r"(#{1,6}) +(.+?) *#*$", line)
        if not m:
            continue
        base = slug(m[2])
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.append((len(m[1]), m[2], base if n == 0 else f"{base}-{n}"))
    return out


def toc(path: Path) -> str:
    """The table of contents of a page: its ## and ### headings."""
    lines = []
    for level, text, anchor in headings(path):
        if level in (2, 3):
            label = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
            lines.append(f"{'  ' * (level - 2)}- [{label}](#{anchor})")
    return "\n".join(lines) + "\n"


def links(path: Path) -> list[str]:
    text = "\n".join(prose_lines(path.read_text(encoding="utf-8")))
    text = re.sub(r"`[^`\n]*`", "", text)  # code spans hold no links
    return [m["target"] for m in LINK.finditer(text)] + [m["target"]
                                                         for m in IMAGE.finditer(text)]


def broken_links(path: Path) -> list[str]:
    bad = []
    for target in links(path):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            bad.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in {a for _, _, a in
                                                                 headings(dest)}:
            bad.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    return bad


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_lead_somewhere(page):
    assert broken_links(page) == []


def cited_pages() -> dict[str, list[str]]:
    """docs/*.md named in the code, tests, benches and pages: {page: [where]}."""
    found: dict[str, list[str]] = {}
    files = [p for d in ("mqctl", "tests", "bench", "fuzz", "plugins", "docs")
             for p in (ROOT / d).rglob("*") if p.suffix in (".py", ".md", ".yaml", ".toml")]
    files += [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "pyproject.toml",
              ROOT / "dev"]
    for f in files:
        for m in CITED.finditer(f.read_text(encoding="utf-8", errors="replace")):
            found.setdefault(m[0], []).append(str(f.relative_to(ROOT)))
    return found


def test_cited_pages_exist():
    cited = cited_pages()
    assert "docs/errors.md" in cited  # the scan finds citations at all
    missing = {page: where for page, where in cited.items() if not (ROOT / page).exists()}
    assert missing == {}


def test_the_index_lists_every_page():
    index = DOCS / "README.md"
    listed = {Path(t.partition("#")[0]).name for t in links(index)}
    pages = {p.name for p in DOCS.glob("*.md")} - {"README.md"}
    assert pages - listed == set(), "docs/README.md does not link these pages"
    readme = {t.partition("#")[0] for t in links(ROOT / "README.md")}
    assert "docs/README.md" in readme, "the README links the docs index"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_long_pages_open_with_a_table_of_contents(page):
    text = page.read_text(encoding="utf-8")
    m = TOC.search(text)
    if len(text.splitlines()) > TOC_OVER_LINES and page.name != "CHANGELOG.md":
        assert m, f"{page.name} is over {TOC_OVER_LINES} lines and has no table of contents"
    if m:
        assert m["body"] == toc(page), (f"{page.name}: its table of contents is stale: "
                                        f"python tests/test_docs_links.py {page.name}")


def words(path: Path) -> int:
    """Words as ``wc -w`` counts them: the whole file, code blocks and tables included."""
    return len(path.read_text(encoding="utf-8").split())


def test_the_readme_is_read_in_a_few_minutes():
    assert words(ROOT / "README.md") <= README_WORDS


def test_no_page_is_longer_than_a_sitting():
    long = {p.name: words(p) for p in DOCS.glob("*.md") if words(p) > PAGE_WORDS}
    assert long == {}, f"split these by question: {long}"


def opening(path: Path) -> tuple[str, str]:
    """(the paragraph after the title, what follows it up to the first section)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines and lines[0].startswith("# "), f"{path.name} does not start with its title"
    paras = "\n".join(lines[1:]).split("\n## ", 1)[0].strip().split("\n\n")
    return paras[0], "\n\n".join(paras[1:])


def sentences(text: str) -> int:
    text = re.sub(r"`[^`]*`|\([^()]*\)", "", text)  # code spans and asides end no sentence
    return len(re.findall(r"[.?!](?=\s|$)", text))


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_every_page_says_what_it_answers_then_its_contents(page):
    """A page opens with one or two sentences saying what it answers, then its table of
    contents: a reader knows at once whether to read on, and where."""
    lead, rest = opening(page)
    assert re.match(r"[A-Za-z`*\[]", lead) and not lead.startswith("**Contents"), (
        f"{page.name}: the title is not followed by what the page answers")
    assert 1 <= sentences(lead) <= 2 and len(lead.split()) <= LEAD_WORDS, (
        f"{page.name}: say what it answers in one or two sentences: {lead!r}")
    assert re.match(r"(\*\*Contents\*\*\n\n)?<!-- toc -->\n", rest), (
        f"{page.name}: its table of contents follows: python tests/test_docs_links.py "
        f"{page.name}")


def test_readme_gets_an_operator_to_the_daily_commands_in_one_screen():
    """The Quickstart is exactly two set-up commands, and the daily commands are on the
    README's first screen as examples the docs test runs."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    block = quick.split("```", 2)[1]
    commands = [ln.split("#")[0].strip() for ln in block.splitlines() if ln.strip()]
    assert commands == ["./dev demo", "./dev test"]
    first_screen = "\n".join(text.splitlines()[:60])
    for daily in ("groups", "group progress", "diagnose", "locks show", "offsets reset",
                  "lag report"):
        assert f"$ mqctl {daily}" in first_screen, daily
    assert re.search(r"^\$ mqctl offsets reset .*--execute", first_screen, re.M)


@pytest.mark.parametrize("heading, anchor", [
    ("1. Look first", "1-look-first"),
    ("`mqctl locks show --group G`", "mqctl-locks-show---group-g"),
    ("Queues without a committed offset: `none`", "queues-without-a-committed-offset-none"),
    ("Compared with mqadmin `resetOffsetByTime`", "compared-with-mqadmin-resetoffsetbytime"),
    ("2.1 Kinds and how they are recognised", "21-kinds-and-how-they-are-recognised"),
    ("Ctrl-C, SIGTERM and SIGHUP during `locks release --execute`",
     "ctrl-c-sigterm-and-sighup-during-locks-release---execute")])
def test_slug_is_githubs(heading, anchor):
    assert slug(heading) == anchor


if __name__ == "__main__":  # (re)write the table of contents of the pages given
    for arg in sys.argv[1:]:
        page = Path(arg) if Path(arg).exists() else DOCS / arg
        text = page.read_text(encoding="utf-8")
        block = f"<!-- toc -->\n{toc(page)}<!-- /toc -->\n"
        if m := TOC.search(text):
            text = text[:m.start()] + block + text[m.end():]
        else:  # before the first section, after the page's introduction
            m = re.search(r"^## ", text, re.M)
            at = m.start() if m else len(text)
            text = f"{text[:at]}**Contents**\n\n{block}\n{text[at:]}"
        page.write_text(text, encoding="utf-8")
        print(f"{page}: table of contents written")


TRACKER_REF = re.compile(r"(?<![\w/#-])(?:[Ii]ssues?|[Ii]tems?)\s+[0-9]+[a-z]?\b")


def test_no_word_points_to_a_tracker_outside_the_repository():
    """Code, tests, benches and docs name the behaviour or the test that pins it, never "issue
    N" or "item N" of a tracker a reader of the repository does not have (upstream references
    such as ``apache/rocketmq issue #1445`` or a sample's file name stay)."""
    found = []
    for top in ("mqctl", "tests", "bench", "fuzz", "plugins", "docs", "completions"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in {".py", ".md", ".yaml", ".sh", ".toml"} or not path.is_file():
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if TRACKER_REF.search(line) and path.name != "test_docs_links.py":
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found += [f"README.md: {m[0]}" for m in TRACKER_REF.finditer(readme)]
    assert found == [], "\n".join(found)
