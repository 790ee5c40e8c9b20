// Import: upload an Obsidian vault, a Notion export or a folder of Markdown as a zip; watch it
// land (the notes are readable as they land), cancel it, read the ledger afterwards — a row for
// every item, filterable by reason — and verify the import as yours, so agents can read it.
import { explain } from "../explain.js";
import { el, fill, idempotencyKey, link } from "../dom.js";

const POLL_MS = 300;
const DONE = new Set(["completed", "cancelled", "failed", "interrupted"]);
const LEDGER_PAGE = 500;

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

// Until the import ends: its progress, with a Cancel button while it runs.
async function follow(app, importId, status, closed) {
  for (;;) {
    const view = await app.api.json("GET", `/v1/imports/${importId}`);
    if (closed()) return view;
    if (DONE.has(view.status)) {
      fill(status, el("p", { class: "import-summary", dataset: { status: view.status } }, view.summary?.text ?? `The import ${view.status}${view.problem?.detail ? `: ${view.problem.detail}` : "."}`));
      return view;
    }
    const { notes_done: done = 0, notes_total: total = 0, phase } = view.progress;
    const cancel = el("button", { type: "button", onclick: () => app.api.json("POST", `/v1/imports/${importId}/cancel`, { json: { idempotencyKey: idempotencyKey() } }).catch((error) => app.flash(explain(error, "The import could not be cancelled"))) }, "Cancel");
    fill(status, el("p", {}, total ? `Importing notes: ${done} of ${total}` : `Importing (${phase ?? "starting"})…`), bar(done, total || 1, "Imported"), cancel);
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
      el("td", {}, row.detail || row.target || ""))));
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
    el("h2", {}, "Ledger"),
    el("div", { class: "ledger-tools" }, filter, verify),
    el("table", {}, el("thead", {}, el("tr", {}, ...["Item", "Kind", "Status", "Reason", "Detail"].map((name) => el("th", {}, name)))), body));
  render();
}

function notImported(row) {
  return row.status === "skipped" || row.status === "failed" || row.status === "cancelled";
}
