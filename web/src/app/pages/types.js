// The workspace's types (/types): each with the types it extends and its properties, and a form
// to define a new one or add properties to one. The server checks every name, kind, option
// and target (POST /v1/types, PATCH /v1/types/{name}); what it refuses is said beside the form,
// and the form keeps what was typed.
import { el, fill, idempotencyKey, link } from "../dom.js";
import { explain } from "../explain.js";

const KINDS = ["text", "number", "url", "date", "datetime", "checkbox", "select", "multi_select", "person", "relation", "file"];

export function typesPage(app) {
  const section = el("section", { class: "list types-page" });
  let types = [];

  const load = async () => {
    try {
      types = (await app.api.json("GET", "/v1/types")).items;
    } catch (error) {
      fill(section, el("h1", {}, "Types"), el("p", {}, explain(error, "The types could not be loaded")));
      return;
    }
    render();
  };

  const render = () => {
    fill(section,
      el("h1", {}, "Types"),
      el("p", { class: "quiet" }, "A type gives notes properties to fill in. A type can extend others: its notes get their properties too."),
      types.length ? el("ul", { class: "type-list" }, types.map((type) => el("li", { dataset: { type: type.name } },
        el("h2", {}, link(`/types/${encodeURIComponent(type.name)}`, `#${type.name}`),
          type.extends.length ? el("span", { class: "quiet" }, ` extends ${type.extends.join(", ")}`) : null),
        type.available_properties.length
          ? el("ul", { class: "property-list" }, type.available_properties.map((prop) => el("li", {},
              el("strong", {}, prop.name), ` ${prop.kind.replace("_", " ")}`,
              prop.options?.length ? ` (${prop.options.join(", ")})` : "", prop.target ? ` → #${prop.target}` : "",
              prop.key.split(".")[0] !== type.name ? el("span", { class: "quiet" }, ` from #${prop.key.split(".")[0]}`) : null)))
          : el("p", { class: "quiet" }, "No properties yet."),
        propertyForm(app, type, types, load))))
        : el("p", { class: "quiet" }, "No types yet."),
      newTypeForm(app, types, load));
  };

  app.show("Types", section);
  load();
  return { close() {} };
}

// One property's fields: name, kind, and the options or target its kind needs.
function propertyFields(types, { required }) {
  const name = el("input", { name: "property", required, "aria-label": "Property name", placeholder: "due_date" });
  const kind = el("select", { name: "kind", "aria-label": "Kind" }, KINDS.map((k) => el("option", { value: k }, k.replace("_", " "))));
  const options = el("input", { name: "options", "aria-label": "Options", placeholder: "todo, doing, done", hidden: true });
  const target = el("select", { name: "target", "aria-label": "Target type", hidden: true }, types.map((t) => el("option", { value: t.name }, t.name)));
  kind.addEventListener("change", () => {
    options.hidden = !kind.value.endsWith("select");
    target.hidden = kind.value !== "relation";
  });
  const read = () => ({
    name: name.value.trim(), kind: kind.value,
    ...(kind.value.endsWith("select") ? { options: options.value.split(",").map((o) => o.trim()).filter(Boolean) } : {}),
    ...(kind.value === "relation" ? { target: target.value } : {}),
  });
  return { fields: el("div", { class: "property-fields" }, name, kind, options, target), read };
}

function newTypeForm(app, types, reload) {
  const name = el("input", { name: "name", required: true, "aria-label": "Type name", placeholder: "Project" });
  const extendsSelect = el("select", { name: "extends", multiple: true, "aria-label": "Extends" }, types.map((t) => el("option", { value: t.name }, t.name)));
  const first = propertyFields(types, { required: false });
  const said = el("p", { class: "field-error", role: "alert", hidden: true });
  const form = el("form", { class: "type-form", "aria-label": "New type" },
    el("h2", {}, "New type"), el("label", {}, "Name ", name),
    types.length ? el("label", {}, "Extends ", extendsSelect) : null,
    el("fieldset", {}, el("legend", {}, "A first property (optional)"), first.fields),
    el("button", { type: "submit", class: "primary" }, "Create type"), said);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const property = first.read();
    const body = { name: name.value.trim(), extends: [...extendsSelect.selectedOptions].map((o) => o.value),
      properties: property.name ? [property] : [], idempotencyKey: idempotencyKey() };
    if (await submit(app, said, "POST", "/v1/types", body, "The type could not be created")) reload();
  });
  return form;
}

function propertyForm(app, type, types, reload) {
  const fields = propertyFields(types, { required: true });
  const said = el("p", { class: "field-error", role: "alert", hidden: true });
  const form = el("form", { class: "property-form", "aria-label": `Add a property to ${type.name}` }, fields.fields,
    el("button", { type: "submit" }, "Add property"), said);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const own = type.properties.map((prop) => Object.fromEntries(Object.entries(prop).filter(([, value]) => value !== null)));
    const body = { properties: [...own, fields.read()], expectedVersion: type.version, idempotencyKey: idempotencyKey() };
    if (await submit(app, said, "PATCH", `/v1/types/${encodeURIComponent(type.name)}`, body, "The property could not be added")) reload();
  });
  return form;
}

// Sends a form's body; on a refusal, says why beside the form (each field the server named).
async function submit(app, said, method, path, body, failure) {
  try {
    await app.api.json(method, path, { json: body });
    return true;
  } catch (error) {
    const fields = error.problem?.field_errors?.map((item) => `${item.field}: ${item.message}`).join("; ");
    said.textContent = fields ? `${failure}: ${fields}` : explain(error, failure);
    said.hidden = false;
    return false;
  }
}
