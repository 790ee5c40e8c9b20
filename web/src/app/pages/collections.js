// A collection's page (/collections/{id}: the view, full width, its month from ?month=YYYY-MM
// for a calendar or timeline) and the page that creates one (/collections/new).
import { CollectionView, LAYOUTS, layoutNeeds, startOfMonth } from "../collection_view.js";
import { explain } from "../explain.js";
import { el, fill, idempotencyKey } from "../dom.js";

export function collectionPage(app, collectionId) {
  const month = /^\d{4}-\d{2}$/.exec(new URLSearchParams(location.search).get("month") ?? "");
  const view = new CollectionView(app, collectionId, { month: month ? startOfMonth(new Date(`${month[0]}-01T00:00:00Z`)) : null });
  app.show(app.collections.name(collectionId) ?? "View", el("div", { class: "collection-page" }, view.element));
  view.ready.then(() => view.view && (app.heading.textContent = view.view.name));
  return { close: () => view.close(), view };
}

export function newCollectionPage(app) {
  const name = el("input", { name: "name", required: true, maxlength: 200, "aria-label": "Name", placeholder: "Reading list" });
  const type = el("select", { name: "type", required: true, "aria-label": "Type" });
  const layout = el("select", { name: "layout", "aria-label": "Layout" }, LAYOUTS.map((value) => el("option", { value }, value[0].toUpperCase() + value.slice(1))));
  const error = el("p", { class: "error", role: "alert", hidden: true });
  const form = el("form", { class: "new-collection" },
    el("label", {}, "Name", name), el("label", {}, "Notes of type", type), el("label", {}, "Layout", layout),
    el("button", { type: "submit", class: "primary" }, "Create view"), error);
  let types = [];
  app.api.json("GET", "/v1/types").then((page) => {
    types = page.items;
    fill(type, types.map((t) => el("option", { value: t.name }, `#${t.name}`)));
  }).catch((failure) => fill(type, el("option", { value: "" }, explain(failure, "Types could not be read"))));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const chosen = types.find((t) => t.name === type.value);
    const needs = chosen && layoutNeeds(layout.value, chosen.available_properties, { type: chosen.name });
    if (!needs) {
      error.hidden = false;
      error.textContent = chosen ? `A ${layout.value} needs ${layout.value === "board" ? "a property to group by" : "a date property"} on #${chosen.name}.` : "Choose a type.";
      return;
    }
    try {
      const view = await app.api.json("POST", "/v1/collections", { json: { name: name.value, layout: layout.value, ...needs, idempotencyKey: idempotencyKey() } });
      app.collections.put(view);
      app.go(`/collections/${view.id}`);
    } catch (failure) {
      error.hidden = false;
      error.textContent = explain(failure, "The view could not be created");
    }
  });
  app.show("New view", el("section", { class: "list" }, el("h1", {}, "New view"),
    el("p", { class: "quiet" }, "A view is a saved question over the notes of one type: it shows them as they are now, never a copy."), form));
  return {};
}
