// Search: the same hybrid search agents use, with every hit's explanation one click away
// (which strategies found it and at what rank, the matched terms, the graph path, penalties,
// and the note that superseded it), and filters for type, archived notes and the trust floor.
import { explain } from "../explain.js";
import { el, fill, link } from "../dom.js";

const FLOORS = [["all", "Everything (your notes as they are)"], ["reviewed", "Reviewed: as an agent set to “reviewed” sees it"], ["human", "Human: as an agent sees it by default"]];
const LIMIT = 50;

export function searchPage(app, query) {
  const params = new URLSearchParams(location.search);
  const chosen = { type: params.get("type") ?? "", archived: params.get("archived") === "1", floor: params.get("floor") ?? "all" };
  const input = el("input", { type: "search", name: "q", value: query, "aria-label": "Search for" });
  const type = el("select", { name: "type", "aria-label": "Type" }, el("option", { value: "" }, "Any type"),
    ...app.index.types().map(([name]) => el("option", { value: name, selected: name === chosen.type }, `#${name}`)));
  const archived = el("input", { type: "checkbox", name: "archived", checked: chosen.archived });
  const floor = el("select", { name: "floor", "aria-label": "Trust floor" }, ...FLOORS.map(([value, label]) => el("option", { value, selected: value === chosen.floor }, label)));
  const form = el("form", { class: "search-form" }, input, type, el("label", {}, archived, " Include archived"), floor, el("button", { type: "submit" }, "Search"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = new URLSearchParams({ q: input.value });
    if (type.value) next.set("type", type.value);
    if (archived.checked) next.set("archived", "1");
    if (floor.value !== "all") next.set("floor", floor.value);
    app.go(`/search?${next}`);
  });
  const results = el("ol", { class: "results" });
  app.show("Search", el("section", { class: "list" }, el("h1", {}, query ? `Search: ${query}` : "Search"), form, results));
  if (!query.trim()) return {};
  const controller = new AbortController();
  app.api
    .json("GET", "/v1/search", { query: { q: query, limit: LIMIT, floor: chosen.floor, include_archived: chosen.archived }, signal: controller.signal })
    .then((page) => {
      const hits = page.hits.filter((hit) => !chosen.type || hit.types.includes(chosen.type));
      fill(results, ...(hits.length ? hits.map((hit) => result(hit)) : [el("p", { class: "quiet" }, nothingFound(page, chosen))]));
    })
    .catch((error) => error?.name !== "AbortError" && fill(results, el("p", { class: "error" }, explain(error, "Search failed"))));
  return { close: () => controller.abort() };
}

function result(hit) {
  const why = hit.explanation;
  return el("li", { class: "hit", dataset: { note: hit.note_id } },
    link(`/notes/${hit.note_id}`, el("span", { class: "title" }, ...highlighted(hit.title || "Untitled", why.matched_terms))),
    hit.archived ? el("span", { class: "badge" }, "archived") : null,
    el("p", { class: "snippet" }, ...highlighted(hit.snippet, why.matched_terms)),
    hit.superseded_by ? el("p", { class: "superseded" }, "Superseded: read ", link(`/notes/${hit.superseded_by}`, "the note that replaced it"), " instead.") : null,
    el("details", { class: "why" },
      el("summary", {}, "Why this result"),
      el("ul", {},
        why.title_match ? el("li", {}, "Its title is what you searched for, so it comes first") : null,
        ...why.contributions.map((c) => el("li", {}, `${c.strategy}: rank ${c.rank} (adds ${c.rrf.toFixed(4)})`)),
        why.matched_terms.length ? el("li", {}, `Matched: ${why.matched_terms.join(", ")}`) : null,
        why.graph_path.length ? el("li", {}, `Reached through links: ${why.graph_path.join(" → ")}`) : null,
        ...why.penalties.map((p) => el("li", {}, `Lowered ×${p.factor}: ${p.reason.replace(/_/g, " ")}`)))));
}

// The text (a title, a snippet) with each matched term marked (case-insensitive; text only, never markup).
function highlighted(text, terms) {
  const words = terms.filter(Boolean).map((term) => term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  if (!words.length) return [text];
  const pattern = new RegExp(`(${words.join("|")})`, "gi");
  return text.split(pattern).map((part, index) => (index % 2 ? el("mark", {}, part) : part));
}

function nothingFound(page, chosen) {
  const off = Object.entries(page.unavailable ?? {}).map(([strategy, why]) => `${strategy} (${why})`);
  const narrowed = [chosen.type && `only #${chosen.type}`, chosen.floor !== "all" && `the ${chosen.floor} floor`, !chosen.archived && "archived notes left out"].filter(Boolean);
  return ["Nothing found.", narrowed.length ? ` Narrowed by: ${narrowed.join(", ")}.` : "", off.length ? ` Not searched: ${off.join(", ")}.` : ""].join("");
}
