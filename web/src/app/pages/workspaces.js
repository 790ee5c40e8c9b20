// Several workspaces: the sidebar's switcher (GET /v1/workspaces: the ones you belong to, this
// tab's marked current) and the New workspace page (POST /v1/workspaces: you own it). Switching
// moves this browser's session into the other workspace (POST /v1/session/workspace: a new session
// there, the old one ended) and opens its home page afresh, so every page — the app's and those the
// server renders, like Agents & tokens — acts in it. A tab still open on the workspace it came from
// keeps working there: the app names its workspace on every request (sync/api.js).
import { explain } from "../explain.js";
import { el, fill, idempotencyKey } from "../dom.js";

const NEW = "new";

export function workspaceSwitcher(app) {
  const select = el("select", { name: "workspace", "aria-label": "Workspace", class: "workspace-switcher" });
  const current = () => app.config.workspaceId;
  select.addEventListener("change", async () => {
    const chosen = select.value;
    select.value = current(); // until the switch lands, this tab is where it was
    if (chosen === NEW) return app.go("/workspaces/new");
    try {
      await switchTo(app, chosen);
    } catch (error) {
      app.flash(explain(error, "The workspace could not be opened"));
    }
  });
  const load = async () => {
    const { items } = await app.api.json("GET", "/v1/workspaces");
    fill(select,
      ...items.map((workspace) => el("option", { value: workspace.id, selected: workspace.id === current() }, workspace.name)),
      el("option", { value: NEW }, "New workspace…"));
    select.value = current();
  };
  load().catch(() => fill(select, el("option", { value: current() }, "This workspace")));
  return { element: el("div", { class: "workspace" }, select), reload: load };
}

export function newWorkspacePage(app) {
  const name = el("input", { type: "text", name: "name", required: true, maxLength: 200, placeholder: "Side project", autocomplete: "off" });
  const message = el("p", { role: "status" });
  const form = el("form", { class: "search-form new-workspace" },
    el("label", {}, "Name ", name), el("button", { type: "submit", class: "primary" }, "Create workspace"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const created = await app.api.json("POST", "/v1/workspaces", { json: { name: name.value, idempotencyKey: idempotencyKey() } });
      await switchTo(app, created.id);
    } catch (error) {
      fill(message, el("span", { class: "error" }, explain(error, "The workspace could not be created")));
    }
  });
  app.show("New workspace", el("section", { class: "list" },
    el("h1", {}, "New workspace"),
    el("p", { class: "quiet" }, "A workspace of your own, empty, with you as its owner. Its notes, people and agents are its own: nothing of this workspace is in it."),
    form, message));
  name.focus();
}

async function switchTo(app, workspaceId) {
  await app.api.json("POST", "/v1/session/workspace", { json: { workspace_id: workspaceId } });
  location.assign("/");
}
