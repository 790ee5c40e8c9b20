"""Link resolution by Obsidian's rules, and how links are rewritten for the write path (pure, no store)."""

from __future__ import annotations

from fastpad.importers.ledger import AMBIGUOUS_WIKILINK, UNRESOLVED_WIKILINK, LinkProblem
from fastpad.importers.resolve import PathIndex
from fastpad.importers.rewrite import ATTACHMENT, NOTE, LinkRewriter, LinkTarget
from fastpad.notes.blocks import CODE, PARAGRAPH, TABLE_ROW

PATHS = ["Home.md", "Projects/Plan.md", "Projects/Notes.md", "Work/Meeting.md", "Personal/Meeting.md",
         "Work/Sub/Deep.md", "diagram.png", "Views.base", "Archive/Plan.md", "Archive/Old plan.md"]


def index() -> PathIndex:
    return PathIndex(PATHS, {"Home.md": ["Start", "Front page"], "Projects/Notes.md": ["Twin"],
                             "Archive/Old plan.md": ["Twin"]})


def test_a_path_from_the_root_then_relative_then_by_name() -> None:
    idx = index()
    assert idx.resolve("Home.md", "Projects/Plan").path == "Projects/Plan.md"  # path from the root
    assert idx.resolve("Projects/Notes.md", "Plan").path == "Projects/Plan.md"  # by name: its own folder wins
    assert idx.resolve("Projects/Notes.md", "../Home").path == "Home.md"  # relative
    assert idx.resolve("Work/Meeting.md", "Sub/Deep").path == "Work/Sub/Deep.md"  # relative, before a path suffix
    assert idx.resolve("Home.md", "Sub/Deep").path == "Work/Sub/Deep.md"  # a partial path matches a path's end
    assert idx.resolve("Home.md", "home.md").path == "Home.md"  # .md optional, case ignored
    assert idx.resolve("Home.md", "diagram.png").path == "diagram.png"


def test_several_matches_by_name_are_ambiguous_unless_one_sits_beside_the_link() -> None:
    idx = index()
    found = idx.resolve("Home.md", "Meeting")
    assert found.path is None and found.ambiguous
    assert found.candidates == ("Personal/Meeting.md", "Work/Meeting.md")
    assert idx.resolve("Work/Sub/Deep.md", "Meeting").ambiguous  # the parent folder is not "beside"
    assert idx.resolve("Work/Meeting.md", "Meeting").path == "Work/Meeting.md"
    assert idx.resolve("Home.md", "Plan").ambiguous  # Projects/Plan.md and Archive/Plan.md


def test_aliases_count_when_no_file_matches() -> None:
    idx = index()
    assert idx.resolve("Projects/Plan.md", "Start").path == "Home.md"
    assert idx.resolve("Projects/Plan.md", "front PAGE").path == "Home.md"
    assert idx.resolve("Home.md", "Twin").ambiguous
    assert idx.resolve("Home.md", "Nowhere").path is None and not idx.resolve("Home.md", "Nowhere").ambiguous


def test_a_markdown_link_is_tried_relative_first() -> None:
    idx = PathIndex(["a/x.md", "x.md"])
    assert idx.resolve("a/y.md", "x.md", relative_first=True).path == "a/x.md"
    assert idx.resolve("a/y.md", "x.md").path == "x.md"
    assert idx.resolve("a/y.md", "../../escape.md", relative_first=True).path is None


def rewriter() -> LinkRewriter:
    targets = {
        "Home.md": LinkTarget(NOTE, title="Home"),
        "Projects/Plan.md": LinkTarget(NOTE, title="Plan (Projects)"),
        "Work/Meeting.md": LinkTarget(NOTE, title="Meeting (Work)"),
        "Personal/Meeting.md": LinkTarget(NOTE, title="Meeting (Personal)"),
        "diagram.png": LinkTarget(ATTACHMENT, url="/v1/attachments/01J0000000000000000000000A", name="diagram.png"),
    }
    return LinkRewriter(index(), targets)


def rewrite(text: str, block_type: str = PARAGRAPH, source: str = "Home.md") -> tuple[str, dict[str, LinkProblem]]:
    problems: dict[str, LinkProblem] = {}
    return rewriter().rewrite(source, "Home", block_type, text, problems), problems


def test_links_to_notes_name_their_title_and_keep_what_they_showed() -> None:
    text, problems = rewrite("[[Projects/Plan]] [[Projects/Plan#Goals|goals]] [[Projects/Plan#^step1]] "
                             "![[Projects/Plan]] [[Start]] [[#Top]]")
    assert text == ("[[Plan (Projects)|Projects/Plan]] [[Plan (Projects)|goals]] "
                    "[[Plan (Projects)|Projects/Plan#^step1]] ![[Plan (Projects)|Projects/Plan]] [[Home|Start]] "
                    "[[Home|#Top]]")
    assert problems == {}
    markdown, _ = rewrite("[the plan](Projects/Plan.md#goals) [Home](Home.md) [x](https://e.com/a.md) [y](#top)")
    assert markdown == "[[Plan (Projects)|the plan]] [[Home]] [x](https://e.com/a.md) [y](#top)"


def test_attachments_become_urls_and_files_that_are_not_notes_are_escaped() -> None:
    text, problems = rewrite("![[diagram.png|300]] [[diagram.png|the diagram]] ![d](diagram.png) [[Views.base]]")
    url = "/v1/attachments/01J0000000000000000000000A"
    assert text == f"![diagram.png]({url}) [the diagram]({url}) ![d]({url}) \\[[Views.base]]"
    assert problems == {}


def test_missing_and_ambiguous_links_are_reported_once_per_target() -> None:
    text, problems = rewrite("[[Nowhere]] [[nowhere|again]] [[Nowhere#Part]] [[Meeting]] [gone](gone.md) "
                             "[[lost.png]]")
    assert text == "[[Nowhere]] [[nowhere|again]] [[Nowhere|Nowhere#Part]] \\[[Meeting]] [gone](gone.md) \\[[lost.png]]"
    assert {k: p.reason for k, p in problems.items()} == {
        "nowhere": UNRESOLVED_WIKILINK, "meeting": AMBIGUOUS_WIKILINK, "gone.md": UNRESOLVED_WIKILINK,
        "lost.png": UNRESOLVED_WIKILINK}
    assert "Personal/Meeting.md, Work/Meeting.md" in problems["meeting"].detail


def test_code_is_left_alone_and_a_table_row_keeps_its_cells() -> None:
    assert rewrite("`[[Nowhere]]` and ``[[x]]``")[0] == "`[[Nowhere]]` and ``[[x]]``"
    assert rewrite("[[Nowhere]]", CODE) == ("[[Nowhere]]", {})
    row, _ = rewrite("| [[Projects/Plan\\|plan]] | [[Home]] |", TABLE_ROW)
    assert row == "| [[Plan (Projects)]] | [[Home]] |"
