// Audit: the workspace's audit log (GET /v1/audit), newest first, for an owner or admin —
// sign-ins, tokens, accepts, reverts, publishing, purges, imports, exports, reveals. Filters by
// who, what, which note and when live in the address (so a filtered view can be linked to);
// "More" fetches the next, older page with the cursor the last one gave.
import { explain } from "../explain.js";
import { el, fill, link } from "../dom.js";

const PAGE = 50;
const ACTIONS = {
  "session.signed_in": "Signed in",
  "session.sign_in_failed": "Failed sign-in",
  "token.minted": "Minted a token",
  "token.revoked": "Revoked a token",
  "turn.accepted": "Accepted a proposal",
  "turn.auto_applied": "Auto-applied a proposal",
  "turn.reverted": "Reverted a proposal",
  "note.published": "Published a note",
  "note.unpublished": "Unpublished a note",
  "note.purged": "Purged a note from the trash",
  "import.started": "Started an import",
  "import.finished": "Finished an import",
  "workspace.exported": "Exported the workspace",
  "placeholder.revealed": "Revealed a redacted secret",
  "invitation.created": "Invited someone",
  "invitation.accepted": "Accepted an invitation",
  "invitation.revoked": "Revoked an invitation",
  "member.role_changed": "Changed a role",
  "member.removed": "Removed a member",
  "workspace.created": "Created the workspace",
};
const FILTERS = ["actor", "action", "note_id", "since", "until"];
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

const COLUMNS = ["When", "Who", "What", "Note", "On", "Details"];

export function auditPage(app) {
  const params = new URLSearchParams(location.search);
  const chosen = Object.fromEntries(FILTERS.map((name) => [name, params.get(name) ?? ""]));
  const names = new Map(); // person, agent and token ids -> what to call them
  const actor = el("select", { name: "actor", "aria-label": "Who" }, el("option", { value: "" }, "Anyone"));
  const action = el("select", { name: "action", "aria-label": "What" }, el("option", { value: "" }, "Any action"),
    ...Object.entries(ACTIONS).map(([slug, label]) => el("option", { value: slug, selected: slug === chosen.action }, label)));
  const note = el("select", { name: "note_id", "aria-label": "Note" }, el("option", { value: "" }, "Any note"),
    ...app.index.recent().map((n) => el("option", { value: n.id, selected: n.id === chosen.note_id }, n.title || "Untitled")));
  if (chosen.note_id && !note.querySelector(`option[value="${chosen.note_id}"]`)) note.append(el("option", { value: chosen.note_id, selected: true }, chosen.note_id));
  const since = el("input", { type: "date", name: "since", value: dayOf(chosen.since, 0), "aria-label": "From" });
  const until = el("input", { type: "date", name: "until", value: dayOf(chosen.until, -1), "aria-label": "To" });
  const form = el("form", { class: "search-form audit-filters" }, actor, action, note,
    el("label", {}, "From ", since), el("label", {}, "to ", until), el("button", { type: "submit" }, "Filter"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const [name, value] of [["actor", actor.value], ["action", action.value], ["note_id", note.value],
      ["since", dayStart(since.value, 0)], ["until", dayStart(until.value, 1)]]) if (value) next.set(name, value);
    app.go(`/audit${next.toString() ? `?${next}` : ""}`);
  });
  const rows = el("tbody");
  const more = el("button", { type: "button", class: "more", hidden: true }, "More");
  const message = el("p", { class: "quiet", role: "status" });
  const table = el("table", { class: "audit-log" }, el("thead", {}, el("tr", {}, ...COLUMNS.map((h) => el("th", { scope: "col" }, h)))), rows);
  app.show("Audit log", el("section", { class: "list audit" }, el("h1", {}, "Audit log"), form, table, message, more));

  const controller = new AbortController();
  const query = Object.fromEntries(FILTERS.filter((name) => chosen[name]).map((name) => [name, chosen[name]]));
  let cursor = null;
  const load = async () => {
    more.disabled = true;
    try {
      const page = await app.api.json("GET", "/v1/audit", { query: { ...query, limit: PAGE, ...(cursor ? { cursor } : {}) }, signal: controller.signal });
      rows.append(...page.items.map((entry) => row(app, entry, names)));
      cursor = page.next_cursor;
      more.hidden = !cursor;
      message.textContent = rows.children.length ? "" : "Nothing recorded matches.";
    } catch (error) {
      if (error?.name === "AbortError") return;
      fill(message, el("span", { class: "error" }, explain(error, "The audit log could not be read")));
      form.hidden = table.hidden = !rows.children.length; // refused outright (a member): nothing to filter
    } finally {
      more.disabled = false;
    }
  };
  more.addEventListener("click", load);
  // Names first (so the first rows show them), then the first page.
  whoIsWho(app, names, controller.signal).then(() => {
    for (const [id, name] of names) if (!id.startsWith("token:")) actor.append(el("option", { value: id, selected: id === chosen.actor }, name));
    return load();
  });
  return { close: () => controller.abort() };
}

// People by their member names, agents and their tokens by their names and labels. Either list
// may be out of reach (an admin lists only the agents they manage): an unknown id shows itself.
async function whoIsWho(app, names, signal) {
  const [members, agents] = await Promise.all([
    app.api.json("GET", "/v1/members", { signal }).catch(() => ({ items: [] })),
    app.api.json("GET", "/v1/agents", { signal }).catch(() => ({ items: [] })),
  ]);
  for (const person of members.items) names.set(person.id, person.display_name || person.email);
  for (const agent of agents.items) {
    names.set(agent.id, `${agent.name} (agent)`);
    for (const token of agent.tokens) names.set(`token:${token.id}`, token.label || token.prefix);
  }
}

function row(app, entry, names) {
  const who = entry.actor;
  // An id no list named (a person's CLI token, a revoked agent's) is shortened; its whole self is the title.
  const name = (id) => names.get(id) ?? names.get(`token:${id}`) ?? (ULID.test(id) ? `…${id.slice(-6)}` : id);
  const actorText = { operator: "The operator (command line)", system: "Fastpad itself", anonymous: "Someone signed out" }[who.kind]
    ?? `${name(who.id)}${who.token_id ? ` · token ${name(who.token_id)}` : ""}`;
  const title = entry.note_id ? app.index.notes.get(entry.note_id)?.title : null;
  const cells = [
    el("td", {}, el("time", { datetime: entry.at, title: entry.at }, new Date(entry.at).toLocaleString())),
    el("td", { title: [who.id, who.token_id].filter(Boolean).join(" · ") }, actorText),
    el("td", {}, ACTIONS[entry.action] ?? entry.action),
    el("td", {}, entry.note_id ? link(`/notes/${entry.note_id}`, title || "Untitled") : ""),
    el("td", { class: "id", title: entry.target ?? "" }, entry.target && entry.target !== entry.note_id ? name(entry.target) : ""),
    el("td", { class: "details" }, Object.entries(entry.details).filter(([, value]) => value !== null && value !== "")
      .map(([key, value]) => `${key.replace(/_/g, " ")}: ${[value].flat().map((v) => (typeof v === "string" ? name(v) : v)).join(", ")}`).join(" · ")),
  ];
  // Each cell names its column, for the narrow layout where a row is a stack rather than a line.
  cells.forEach((cell, i) => { cell.dataset.column = COLUMNS[i]; });
  return el("tr", { dataset: { seq: String(entry.seq), action: entry.action, target: entry.target ?? "" } }, ...cells);
}

// A chosen day as the instant it starts (or the next day starts: "to" includes the day), in this
// browser's time zone; and back, for the date inputs of a filtered address.
function dayStart(day, plus) {
  if (!day) return "";
  const [year, month, date] = day.split("-").map(Number);
  return new Date(year, month - 1, date + plus).toISOString();
}

function dayOf(instant, plus) {
  const at = instant ? new Date(instant) : null;
  if (!at || Number.isNaN(at.getTime())) return "";
  at.setDate(at.getDate() + plus);
  return `${at.getFullYear()}-${String(at.getMonth() + 1).padStart(2, "0")}-${String(at.getDate()).padStart(2, "0")}`;
}
