// Import: upload an Obsidian vault, a Notion export or a folder of Markdown as a zip; watch it
// land (the notes are readable as they land), cancel it, read the ledger afterwards — a row for
// every item, filterable by reason — and the notes by the folder they sat in, and verify the
// import (or one folder of it) as yours, so agents can read it.
import { explain } from "../explain.js";
import { el, fill, idempotencyKey, link } from "../dom.js";

const POLL_MS = 300;
const DONE = new Set(["completed", "cancelled", "failed", "interrupted"]);
const LEDGER_PAGE = 500;
const NOTE_KINDS = new Set(["note", "canvas", "database_row"]);
const LANDED = new Set(["imported", "unchanged"]);

export function importPage(app) {
  const input = el("input", { type: "file", accept: ".zip,application/zip", "aria-label": "Archive to import" });
  const start = el("button", { type: "button", class: "primary" }, "Import");
  const status = el("section", { class: "import-status", "aria-live": "polite" });
  const ledger = el("section", { class: "ledger" });
  let closed = false;
  let running = null;

  start.addEventListener("click", async () => {
    const file = input.files?.[0];
    if (!file) return app.flash("Choose a zip first: an Obsidian vault, a Notion export or a folder of Markdown.");
    start.disabled = true;
    try {
      running = await upload(app, file, (sent) => showUpload(status, file, sent));
      await follow(app, running.id, status, () => closed);
      if (!closed) await showLedger(app, running.id, ledger);
    } catch (error) {
      fill(status, el("p", { class: "error", role: "alert" }, explain(error, "The import failed")));
    } finally {
      start.disabled = false;
    }
  });

  app.show("Import", el("section", { class: "list import" },
    el("h1", {}, "Import"),
    el("p", { class: "quiet" }, "A zip of an Obsidian vault, a Notion “Markdown & CSV” export or a folder of Markdown files. Imported text is marked as coming from outside until you verify it."),
    el("div", { class: "import-pick" }, input, start),
    status,
    ledger));
  return { close: () => { closed = true; } };
}

// One folder of an imported archive: the notes that sat in it or beneath it (GET /v1/notes?folder=,
// which reads each note's source_folder), by title.
export function folderPage(app, folder) {
  let closed = false;
  const count = el("p", { class: "quiet" }, "Imported notes that sat in this folder or beneath it.");
  const list = el("ul", { class: "notes" });
  app.show(folder, el("section", { class: "list folder-notes" }, el("h1", {}, folder), count, list));
  (async () => {
    const notes = [];
    let cursor;
    do {
      const page = await app.api.json("GET", "/v1/notes", { query: { folder, limit: 200, ...(cursor ? { cursor } : {}) } });
      notes.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor && !closed);
    if (closed) return;
    notes.sort((a, b) => (a.title || "").localeCompare(b.title || ""));
    fill(count, `${notes.length} imported note${notes.length === 1 ? "" : "s"} sat in this folder or beneath it.`);
    fill(list, notes.map((note) => el("li", { class: "note-row" },
      link(`/notes/${note.id}`, el("span", { class: "title" }, note.title || "Untitled")),
      el("span", { class: "types" }, note.types.map((type) => `#${type}`).join(" ")))));
  })().catch((error) => closed || fill(count, el("span", { class: "error", role: "alert" }, explain(error, "The folder could not be listed"))));
  return { close: () => { closed = true; } };
}

// Where a folder's page is (each segment escaped, its slashes kept).
export function folderPath(folder) {
  return `/folders/${folder.split("/").map(encodeURIComponent).join("/")}`;
}

// Announce the archive, then send it in parts at their offsets.
async function upload(app, file, progress) {
  let view = await app.api.json("POST", "/v1/imports", { json: { size: file.size, name: file.name, idempotencyKey: idempotencyKey() } });
  const part = view.upload.max_part_bytes;
  for (let offset = 0; offset < file.size; offset += part) {
    progress(offset);
    view = await app.api.json("PUT", `/v1/imports/${view.id}/archive`, { query: { offset }, bytes: file.slice(offset, offset + part) });
  }
  progress(file.size);
  return view;
}

function showUpload(status, file, sent) {
  fill(status, el("p", {}, `Uploading ${file.name}…`), bar(sent, file.size, "Uploaded"));
}

// Until the import ends: its progress, with a Cancel button while it runs. The button is made
// once, not at every poll, so a click never lands on one being replaced; once pressed it says so
// until the import stops after the batch in flight.
async function follow(app, importId, status, closed) {
  const said = el("p", {}, "Importing (starting)…");
  const meter = bar(0, 1, "Imported");
  const cancel = el("button", { type: "button" }, "Cancel");
  cancel.addEventListener("click", async () => {
    cancel.disabled = true;
    cancel.textContent = "Cancelling…";
    try {
      await app.api.json("POST", `/v1/imports/${importId}/cancel`, { json: { idempotencyKey: idempotencyKey() } });
    } catch (error) {
      cancel.disabled = false;
      cancel.textContent = "Cancel";
      app.flash(explain(error, "The import could not be cancelled"));
    }
  });
  fill(status, said, meter, cancel);
  for (;;) {
    const view = await app.api.json("GET", `/v1/imports/${importId}`);
    if (closed()) return view;
    if (DONE.has(view.status)) {
      fill(status, el("p", { class: "import-summary", dataset: { status: view.status } }, view.summary?.text ?? `The import ${view.status}${view.problem?.detail ? `: ${view.problem.detail}` : "."}`));
      return view;
    }
    const { notes_done: done = 0, notes_total: total = 0, phase } = view.progress;
    said.textContent = total ? `Importing notes: ${done} of ${total}` : `Importing (${phase ?? "starting"})…`;
    meter.max = total || 1;
    meter.value = done;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function bar(done, total, label) {
  return el("progress", { max: String(total), value: String(done), "aria-label": label });
}

// The whole ledger, then a table of it with a filter by reason, and the verify action.
async function showLedger(app, importId, section) {
  const rows = [];
  let cursor;
  do {
    const page = await app.api.json("GET", `/v1/imports/${importId}/ledger`, { query: { limit: LEDGER_PAGE, ...(cursor ? { cursor } : {}) } });
    rows.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor);
  const reasons = [...new Set(rows.map((row) => row.reason).filter(Boolean))].sort();
  const filter = el("select", { "aria-label": "Filter by reason" },
    el("option", { value: "" }, `Every item (${rows.length})`),
    el("option", { value: "not-imported" }, `Not imported (${rows.filter(notImported).length})`),
    ...reasons.map((reason) => el("option", { value: reason }, `${reason.replace(/_/g, " ")} (${rows.filter((row) => row.reason === reason).length})`)));
  const body = el("tbody");
  const render = () => {
    const chosen = filter.value;
    const shown = rows.filter((row) => !chosen || (chosen === "not-imported" ? notImported(row) : row.reason === chosen));
    fill(body, ...shown.map((row) => el("tr", { dataset: { status: row.status } },
      el("td", {}, row.note_id && row.kind !== "link" ? link(`/notes/${row.note_id}`, row.item) : row.item),
      el("td", {}, row.kind),
      el("td", {}, row.status),
      el("td", {}, row.reason ? row.reason.replace(/_/g, " ") : ""),
      el("td", {}, row.target ? [el("code", { class: "target" }, row.target), row.detail ? `: ${row.detail}` : ""] : row.detail))));
  };
  filter.addEventListener("change", render);
  const verify = el("button", { type: "button" }, "Verify as mine");
  verify.addEventListener("click", async () => {
    try {
      const done = await app.api.json("POST", `/v1/imports/${importId}/verify`, { json: {} });
      app.flash(`Verified ${done.notes} notes: agents can now read them at the “reviewed” floor, and their links are confirmed.`);
      verify.disabled = true;
    } catch (error) {
      app.flash(explain(error, "The import could not be verified"));
    }
  });
  fill(section,
    folderView(app, importId, rows),
    el("h2", {}, "Ledger"),
    el("div", { class: "ledger-tools" }, filter, verify),
    el("table", {}, el("thead", {}, el("tr", {}, ...["Item", "Kind", "Status", "Reason", "Detail"].map((name) => el("th", {}, name)))), body));
  render();
}

// The imported notes by the archive folder they sat in (each note keeps it as its source_folder):
// the vault's folder tree in path order, each folder with the notes directly in it, how many it
// holds with its subfolders, and a verify action for that folder and everything beneath it.
function folderView(app, importId, rows) {
  const direct = new Map([["", []]]);
  const beneath = new Map([["", 0]]);
  for (const row of rows) {
    if (!NOTE_KINDS.has(row.kind) || !LANDED.has(row.status) || !row.note_id) continue;
    const folder = folderOf(row.item);
    const parts = folder ? folder.split("/") : [];
    for (let depth = 0; depth <= parts.length; depth += 1) {
      const ancestor = parts.slice(0, depth).join("/");
      if (!direct.has(ancestor)) direct.set(ancestor, []);
      beneath.set(ancestor, (beneath.get(ancestor) ?? 0) + 1);
    }
    direct.get(folder).push(row);
  }
  const paths = [...direct.keys()].sort(byPath);
  const verify = (folder, button) => async (event) => {
    event.preventDefault(); // a click on the button is not a click that opens or closes the folder
    try {
      const done = await app.api.json("POST", `/v1/imports/${importId}/verify`, { json: { folder } });
      app.flash(`Verified ${done.notes} notes in ${folder}: agents can now read them at the “reviewed” floor.`);
      button.disabled = true;
    } catch (error) {
      app.flash(explain(error, `${folder} could not be verified`));
    }
  };
  const count = (n) => `${n} note${n === 1 ? "" : "s"}`;
  return el("section", { class: "folders", "aria-label": "Folders" },
    el("h2", {}, "Folders"),
    paths.map((folder) => {
      const notes = direct.get(folder).sort((a, b) => a.item.localeCompare(b.item));
      const here = notes.length === beneath.get(folder) ? count(notes.length) : `${count(notes.length)}, ${beneath.get(folder)} with its folders`;
      const button = folder ? el("button", { type: "button", title: `Verify the ${count(beneath.get(folder))} in ${folder} and beneath it` }, "Verify folder") : null;
      button?.addEventListener("click", verify(folder, button));
      const details = el("details", { class: "folder", dataset: { folder } },
        el("summary", {}, el("span", { class: "folder-name" }, folder ? folder.split("/").pop() : "Top level"),
          el("span", { class: "quiet" }, here), button),
        el("ul", {}, notes.map((row) => el("li", {}, link(`/notes/${row.note_id}`, row.item.slice(folder ? folder.length + 1 : 0))))));
      details.style.marginLeft = `${folder ? folder.split("/").length * 1.2 : 0}rem`; // nested under its parent
      return details;
    }));
}

// Folder paths in tree order: a folder right before what it holds, segment by segment.
function byPath(a, b) {
  const left = a ? a.split("/") : [];
  const right = b ? b.split("/") : [];
  for (let i = 0; i < Math.min(left.length, right.length); i += 1) {
    const order = left[i].localeCompare(right[i]);
    if (order) return order;
  }
  return left.length - right.length;
}

// The folder an item sat in: a database row's (item "<csv>#row <n>") is its CSV's.
function folderOf(item) {
  const path = item.replace(/#row \d+$/, "");
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "" : path.slice(0, slash);
}

function notImported(row) {
  return row.status === "skipped" || row.status === "failed" || row.status === "cancelled";
}
