"""Carets in the document (web/src/model/carets.js), on the browser's model in Node: where B's
caret is after A's edit reaches B, and where an undo or redo leaves it.

tests/web/carets_driver.mjs runs each scenario on two NoteModels (A's edit exported as an update
and imported by B, as through the server) and prints the outcome; this checks each against what a
person typing there expects. The browser tests (test_carets.py) show the same on screen.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests import node as project_node

DRIVER = Path(__file__).resolve().with_name("carets_driver.mjs")


@pytest.fixture(scope="module")
def outcomes() -> dict:
    project_node.require("Caret scenarios on the browser's document model (tests/web/carets_driver.mjs)")
    done = subprocess.run([str(project_node.NODE), str(DRIVER)], cwd=DRIVER.parents[2], capture_output=True,
                          text=True, encoding="utf-8", timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("scenario, block, offset, text", [
    # B's caret after "hello" (offset 5) or elsewhere; (block, offset) is where it is after A's edit.
    ("insertBefore", 0, 8, "XX hello world"),  # moves with the text
    ("insertAtTheCaret", 0, 5, "helloYY world"),  # stays after B's own last character
    ("insertAfter", 0, 5, "hello woZZrld"),
    ("atTheStart", 0, 1, "Qhello"),  # nothing before it to hold on to: after what A typed there
    ("deleteBefore", 0, 5, "lo world"),
    ("deleteAcrossTheCaret", 0, 3, "helrld"),  # where the deleted text was
    ("afterAnEmoji", 0, 4, "Za😀b"),  # anchored to the whole surrogate pair
    ("splitBefore", 1, 2, "world"),  # carried into the new tail block
    ("splitAfter", 0, 3, "hello "),
    ("joinedOntoThePrevious", 0, 7, "firstsecond"),  # carried into the block it was joined onto
    ("movedBlock", 2, 2, "one"),
])
def test_bs_caret_after_as_edit(outcomes: dict, scenario: str, block: int, offset: int, text: str) -> None:
    assert outcomes[scenario] == {"block": block, "offset": offset, "text": text}


def test_a_caret_in_a_deleted_block_is_gone_rather_than_somewhere_else(outcomes: dict) -> None:
    assert outcomes["deletedBlock"] is None


def test_bs_keystrokes_after_an_insertion_land_at_bs_caret(outcomes: dict) -> None:
    assert outcomes["typedAfterAnInsertion"] == "A says Opening. B: bbb. Closing."


def test_undo_and_redo_leave_the_caret_after_the_restored_text(outcomes: dict) -> None:
    typing, deletion = outcomes["undoRedoTyping"], outcomes["undoRedoDeletion"]
    # B typed " there" after "hello": undo takes it away (caret where it was), redo puts it back (after it).
    assert typing["undo"] == {"text": "hello world", "at": {"block": 0, "offset": 5}}
    assert typing["redo"] == {"text": "hello there world", "at": {"block": 0, "offset": 11}}
    # B deleted "big ": undo puts it back (caret after it), redo takes it away again.
    assert deletion["undo"] == {"text": "hello big world", "at": {"block": 0, "offset": 10}}
    assert deletion["redo"] == {"text": "hello world", "at": {"block": 0, "offset": 6}}
