"""Importing in a real browser: the person picks a vault zip, watches it land, reads a ledger
row for every item (filterable by reason), and verifies it as theirs — after which an agent
reads its text at the reviewed floor."""

from __future__ import annotations

import io
import secrets
import zipfile
from pathlib import Path
from typing import Any

import httpx

from tests.api.conftest import Server
from tests.web.conftest import screenshot
from tests.web.test_editor import api, device, session_state  # noqa: F401  (fixtures)

SESSION = "x-fastpad-session"


def vault_zip(path: Path, word: str) -> Path:
    files = {
        f"Garden {word}.md": f"# Garden {word}\n\nPlant the [[Beans {word}]] in May.\n\nSee [[Nowhere {word}]].\n",
        f"Crops/Beans {word}.md": "Runner beans climb.\n",
        "Locked.md": "-----BEGIN PGP MESSAGE-----\nhQEMA\n-----END PGP MESSAGE-----\n",
        "notes.txt": "not a note\n",
    }
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(f"vault/{name}", text)
    return path


def test_upload_a_vault_read_its_ledger_and_verify_it(device: Any, web_server: Server,  # noqa: F811
                                                       api: httpx.Client, tmp_path: Path) -> None:  # noqa: F811
    word = secrets.token_hex(3)
    page = device().new_page()
    page.goto(f"{web_server.base_url}/import")
    page.get_by_label("Archive to import").set_input_files(str(vault_zip(tmp_path / "garden.zip", word)))
    page.get_by_role("button", name="Import", exact=True).click()
    summary = page.locator(".import-summary")
    summary.wait_for()
    assert summary.get_attribute("data-status") == "completed"
    assert "imported 2 of 3 notes" in summary.text_content()
    page.locator(".ledger tbody tr").first.wait_for()
    items = page.locator(".ledger tbody tr td:first-child").all_text_contents()
    assert {f"Garden {word}.md", f"Crops/Beans {word}.md", "Locked.md", "notes.txt"} <= set(items)
    page.get_by_label("Filter by reason").select_option("encrypted_note")
    assert page.locator(".ledger tbody tr td:first-child").all_text_contents() == ["Locked.md"]
    page.get_by_label("Filter by reason").select_option("not-imported")
    assert "Locked.md" in page.locator(".ledger tbody").text_content()
    screenshot(page, "import-ledger")

    garden = next(n for n in api.get("/v1/notes", params={"limit": 200}).json()["items"]
                  if n["title"] == f"Garden {word}")
    with web_server.client(web_server.mint("notes:read", "--label", "tests: import reader")["token"]) as agent:
        session = agent.post("/v1/agent-sessions").json()["session"]

        def reviewed_text() -> list[str]:
            answer = agent.get(f"/v1/notes/{garden['id']}/handles", headers={SESSION: session},
                               params={"floor": "reviewed"})
            return [b["text"] for b in answer.json()["blocks"]]

        assert reviewed_text() == []
        page.get_by_role("button", name="Verify as mine").click()
        page.locator(".toast", has_text="Verified 2 notes").wait_for()
        assert f"Plant the [[Beans {word}]] in May." in reviewed_text()
