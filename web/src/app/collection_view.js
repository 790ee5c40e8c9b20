// A collection (a saved view) on screen: its name, layout and filters, and its rows in one of
// six layouts. The same component is the page at /collections/{id} and the view a note embeds
// (a `fastpad-collection` code block): both read and change the one object on the server, and
// each re-reads it when the change feed says it changed, so an edit in one place shows in the
// other. Rows are never kept anywhere: every showing asks the server now.
//
// Reading: table, list and gallery read one keyset page and then more on demand; a board reads
// every page (its columns need every card); a calendar (a month) and a timeline (three months)
// ask only for their window, and the server filters by it.
import { CLIPBOARD_TYPE } from "../editor/clipboard.js";
import { explain } from "./explain.js";
import { el, fill, formatValue, idempotencyKey, link } from "./dom.js";
import { nameOf } from "./people.js";

export const EMBED_LANGUAGE = "fastpad-collection"; // fastpad/knowledge/saved_views.py
export const LAYOUTS = ["table", "board", "list", "gallery", "calendar", "timeline"];
const LAYOUT_NAMES = { table: "Table", board: "Board", list: "List", gallery: "Gallery", calendar: "Calendar", timeline: "Timeline" };
// Rows per request: a screenful and more where pages come on demand; where every row shows at
// once, the server's most (MAX_ROWS_PAGE), so a 2,000-card board is two requests.
const PAGE = { table: 100, list: 100, gallery: 30, board: 1000, calendar: 1000, timeline: 1000 };
const TIMELINE_MONTHS = 3;
const TIME_KINDS = new Set(["date", "datetime"]);
const GROUP_KINDS = new Set(["select", "checkbox", "text", "person", "relation", "url", "number"]);
const OPS = { eq: "is", neq: "is not", contains: "contains", lt: "under", gt: "over", has: "is set", has_not: "is empty" };
const TIME_OPS = { ...OPS, lt: "before", gt: "after" };
const FIRST_IMAGE = /!\[[^\]]*\]\(\s*<?([^)\s>]+)/;
const REFRESH_MS = 250;
const DAY_MS = 86_400_000;

// The layout options and query fields a layout needs, chosen from the type's properties when
// the view does not say: a board groups by its first select, a calendar or timeline places rows
// by its first date properties. Null when the type has nothing that fits.
export function layoutNeeds(layout, properties, query) {
  if (layout === "board") {
    if (query.group_by) return { query, layout_options: {} };
    const group = properties.find((p) => p.kind === "select") ?? properties.find((p) => GROUP_KINDS.has(p.kind));
    return group ? { query: { ...query, group_by: group.key }, layout_options: {} } : null;
  }
  // Only a board shows its groups; anywhere else a grouping would be an order nobody chose.
  const { group_by: _grouping, ...ungrouped } = query;
  if (layout === "calendar" || layout === "timeline") {
    const times = properties.filter((p) => TIME_KINDS.has(p.kind));
    if (!times.length) return null;
    const end = times.find((p, i) => i > 0 && /end|due|until|finish/i.test(p.name)) ?? times[1];
    return { query: ungrouped, layout_options: end ? { start: times[0].key, end: end.key } : { start: times[0].key } };
  }
  return { query: ungrouped, layout_options: {} };
}

export class CollectionView {
  // app: the shell (api, feed, index, flash); options.embedded: shown inside a note.
  constructor(app, collectionId, { embedded = false, month = null } = {}) {
    Object.assign(this, { app, collectionId, embedded });
    this.element = el("section", { class: `collection${embedded ? " embedded" : ""}`, dataset: { collection: collectionId }, "aria-label": "Collection" });
    this.month = month ?? startOfMonth(new Date());
    this.generation = 0;
    this.unlisten = app.feed.listen((changes) => this._onChanges(changes));
    this.ready = this.load();
  }

  close() {
    this.closed = true;
    this.unlisten();
    this.observer?.disconnect();
    clearTimeout(this.timer);
  }

  // A note re-renders its blocks; an embed that left the page stops listening on the next change.
  _onChanges(changes) {
    if (!this.element.isConnected && this.view) return this.close();
    const mine = changes.some((c) => c.subject_id === this.collectionId && c.kind.startsWith("collection"));
    const rows = changes.some((c) => c.note_id && c.kind !== "ops") || changes.some((c) => c.kind.startsWith("type_"));
    if (!mine && !rows) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => (mine ? this.load({ ifChanged: true }) : this.loadRows()), REFRESH_MS);
  }

  // ifChanged: only when the view is not the version on screen (a change this place made
  // itself comes back through the feed too, and must not redraw a form being filled in).
  // The view's definition comes from the sidebar's list when it has it, and its first rows are
  // asked for alongside its type's properties: a view opened from the sidebar costs one wait.
  // fresh: read the view from the server even when the sidebar's list has it.
  async load({ ifChanged = false, fresh = ifChanged } = {}) {
    // Only a load that will redraw makes what is on its way (rows being read) stale.
    let generation = ifChanged ? this.generation : ++this.generation;
    try {
      const known = fresh ? null : this.app.collections?.known(this.collectionId);
      const view = known ?? (await this.app.api.json("GET", `/v1/collections/${this.collectionId}`));
      if (ifChanged && view.version === this.view?.version) return;
      if (ifChanged) generation = ++this.generation;
      const firstPage = this._page(view, null);
      firstPage.catch(() => {}); // answered below, or superseded
      const type = await this.app.collections.type(view.query.type);
      if (generation !== this.generation || this.closed) return;
      this.view = view;
      this.properties = type.available_properties;
      if (this.properties.some((p) => p.kind === "person")) this.people = await this.app.people.list().catch(() => []);
      if (generation !== this.generation || this.closed) return;
      this._renderHead();
      await this.loadRows(generation, firstPage);
    } catch (error) {
      if (generation !== this.generation) return;
      fill(this.element, el("p", { class: "error" }, explain(error, error.status === 404 ? "This view is gone" : "The view could not be shown")));
    }
  }

  // One page of the view's rows (in its window, for a calendar or a timeline).
  _page(view, cursor) {
    return this.app.api.json("GET", `/v1/collections/${this.collectionId}/rows`, {
      query: { limit: PAGE[view.layout], cursor, ...(windowOf(view.layout, this.month) ?? {}) },
    });
  }

  // The rows, from the first page, into a fresh body for the layout. A layout that reads every
  // page asks for the next one before it renders the one it has.
  async loadRows(generation = ++this.generation, firstPage = this._page(this.view, null)) {
    this.generation = generation;
    const layout = layoutFor(this);
    this.layout = layout;
    this.observer?.disconnect();
    fill(this.body, layout.root);
    this.loaded = 0;
    delete this.element.dataset.rows; // set again once this layout's rows are in
    let next = firstPage;
    let cursor = null;
    while (next) {
      const page = await next;
      if (generation !== this.generation || this.closed) return;
      cursor = page.next_cursor;
      next = cursor && layout.readsAll ? this._page(this.view, cursor) : null;
      next?.catch(() => {}); // awaited on the next turn, unless this load was superseded
      layout.add(page.items);
      this.loaded += page.items.length;
    }
    this.element.dataset.rows = String(this.loaded);
    this._renderMore(cursor, generation);
    if (!this.loaded) layout.root.append(el("p", { class: "quiet empty-view" }, windowOf(this.view.layout, this.month) ? "Nothing in this window." : "No notes match this view."));
  }

  // Keyset paging: the next page when the person asks, or scrolls to the end.
  _renderMore(cursor, generation) {
    fill(this.foot);
    if (!cursor) return;
    const more = el("button", { type: "button", class: "more" }, "Show more");
    more.addEventListener("click", async () => {
      more.disabled = true;
      try {
        const page = await this._page(this.view, cursor);
        if (generation !== this.generation) return;
        this.layout.add(page.items);
        this.loaded += page.items.length;
        this.element.dataset.rows = String(this.loaded);
        this._renderMore(page.next_cursor, generation);
      } catch (error) {
        more.disabled = false;
        this.app.flash(explain(error, "More rows could not be read"));
      }
    });
    fill(this.foot, more);
    if ("IntersectionObserver" in window && !this.embedded) {
      this.observer = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && !more.disabled && more.click());
      this.observer.observe(more);
    }
  }

  // ------------------------------------------------------------------ the head: name, layout, filters

  _renderHead() {
    const view = this.view;
    const layout = el("select", { name: "layout", "aria-label": "Layout" }, LAYOUTS.map((name) => el("option", { value: name, selected: name === view.layout }, LAYOUT_NAMES[name])));
    layout.addEventListener("change", () => this._changeLayout(layout.value));
    const title = this.embedded
      ? el("h3", { class: "collection-name" }, link(`/collections/${view.id}`, view.name))
      : el("h1", { class: "collection-name" }, view.name);
    const groupBy = view.layout === "board"
      ? el("select", { name: "group_by", "aria-label": "Group by", onchange: (event) => this.save({ query: { ...view.query, group_by: event.target.value } }) },
          this.properties.filter((p) => GROUP_KINDS.has(p.kind)).map((p) => el("option", { value: p.key, selected: p.key === view.query.group_by }, p.name)))
      : null;
    this.body = el("div", { class: "collection-body" });
    this.foot = el("div", { class: "collection-foot" });
    fill(this.element,
      el("header", { class: "collection-head" }, title,
        el("div", { class: "collection-controls" },
          el("span", { class: "quiet type-of" }, `#${view.query.type}`), layout, groupBy,
          this.embedded ? null : el("button", { type: "button", class: "embed-copy", onclick: () => this._copyEmbed() }, "Copy embed"))),
      this._filterBar(),
      this.body, this.foot);
    this.element.dataset.layout = view.layout;
  }

  _filterBar() {
    const filters = this.view.query.filters ?? [];
    const chips = filters.map((filter, index) => el("li", { class: "filter" },
      `${this._propertyName(filter.property)} ${opName(filter.op, this._property(filter.property))}${"value" in filter ? ` ${formatValue(filter.value)}` : ""}`,
      el("button", { type: "button", class: "link remove", "aria-label": `Remove filter ${index + 1}`, onclick: () => this.save({ query: { ...this.view.query, filters: filters.filter((_, i) => i !== index) } }) }, "×")));
    const filterable = this.properties.filter((p) => p.kind !== "file");
    const property = el("select", { name: "filter_property", "aria-label": "Filter property" }, filterable.map((p) => el("option", { value: p.key }, p.name)));
    const op = el("select", { name: "filter_op", "aria-label": "Filter condition" });
    const value = el("span", { class: "filter-value" });
    const sync = () => {
      const prop = filterable.find((p) => p.key === property.value);
      fill(op, opsFor(prop).map((name) => el("option", { value: name }, opName(name, prop))));
      syncValue();
    };
    const syncValue = () => {
      const prop = filterable.find((p) => p.key === property.value);
      fill(value, op.value === "has" || op.value === "has_not" || !prop ? null : valueInput(prop));
    };
    property.addEventListener("change", sync);
    op.addEventListener("change", syncValue);
    sync();
    const add = el("form", { class: "filter-add" }, property, op, value, el("button", { type: "submit" }, "Add filter"));
    add.addEventListener("submit", (event) => {
      event.preventDefault();
      const prop = filterable.find((p) => p.key === property.value);
      const filter = { property: property.value, op: op.value };
      const input = value.querySelector("input, select");
      if (input) filter.value = readValue(prop, input.value);
      this.save({ query: { ...this.view.query, filters: [...filters, filter] } });
    });
    return el("details", { class: "collection-filters", open: this.filtersOpen || undefined, ontoggle: (event) => (this.filtersOpen = event.target.open) },
      el("summary", {}, filters.length ? `Filters · ${filters.length}` : "Filter"),
      filters.length ? el("ul", { class: "filters" }, chips) : null,
      filterable.length ? add : el("p", { class: "quiet" }, "This type has no properties to filter by."));
  }

  _property(key) {
    return this.properties.find((p) => p.key === key);
  }

  _propertyName(key) {
    return this._property(key)?.name ?? key;
  }

  async _changeLayout(layout) {
    const needs = layoutNeeds(layout, this.properties, this.view.query);
    if (!needs) {
      this.app.flash(layout === "board" ? "A board needs a property to group by." : `A ${layout} needs a date property on #${this.view.query.type}.`);
      this._renderHead(); // the layout control goes back to the layout the view has
      return this.loadRows();
    }
    await this.save({ layout, ...needs });
  }

  // Changes the view on the server (the one object every place shows), then shows it.
  async save(patch) {
    try {
      this.view = await this.app.api.json("PATCH", `/v1/collections/${this.collectionId}`, {
        json: { ...patch, expectedVersion: this.view.version, idempotencyKey: idempotencyKey() },
      });
    } catch (error) {
      this.app.flash(explain(error, "The view could not be changed"));
      return this.load({ fresh: true });
    }
    this.app.collections?.put(this.view);
    this._renderHead();
    await this.loadRows();
  }

  // Copies the embedding block as the editor's own clipboard blocks (pasted in a note, it is the
  // view there) and as its Markdown for anywhere else.
  _copyEmbed() {
    const block = { type: "code", text: this.view.id, attrs: { language: EMBED_LANGUAGE } };
    const onCopy = (event) => {
      event.preventDefault();
      event.clipboardData.setData(CLIPBOARD_TYPE, JSON.stringify({ blocks: [block] }));
      event.clipboardData.setData("text/plain", this.view.embed_markdown);
    };
    document.addEventListener("copy", onCopy, { once: true });
    const copied = document.execCommand("copy"); // the one way to put the editor's own type on the clipboard
    document.removeEventListener("copy", onCopy);
    this.app.flash(copied ? "Copied: paste it into a note to show this view there." : `Put this in a note: ${this.view.embed_markdown}`);
  }

  // ------------------------------------------------------------------ moving a card on a board

  async moveCard(noteId, value) {
    const key = this.view.query.group_by;
    try {
      await this.app.api.json("PATCH", `/v1/notes/${noteId}/types`, { json: { properties: { [key]: value }, idempotencyKey: idempotencyKey() } });
    } catch (error) {
      this.app.flash(explain(error, "The card could not be moved"));
      await this.loadRows();
    }
  }

  setMonth(month) {
    this.month = month;
    this.loadRows();
  }
}

// ---------------------------------------------------------------------- layouts

function layoutFor(view) {
  const make = { table, board, list, gallery, calendar, timeline }[view.view.layout] ?? table;
  return make(view);
}

function titleLink(row) {
  return el("a", { href: `/notes/${row.id}`, class: "row-link", dataset: { link: "" } }, row.title || "Untitled");
}

function table(view) {
  const sort = view.view.query.sort?.[0];
  const columns = [{ key: "title", name: "Title" }, ...view.properties];
  const header = (column) => {
    const sorted = sort?.property === column.key ? sort.direction ?? "asc" : null;
    const next = sorted === "asc" ? "desc" : "asc";
    return el("th", { scope: "col", "aria-sort": sorted ? `${sorted}ending` : undefined },
      el("button", { type: "button", class: "sort", title: `Sort by ${column.name}`, onclick: () => view.save({ query: { ...view.view.query, sort: [{ property: column.key, direction: next }] } }) },
        column.name, sorted ? el("span", { class: "arrow", "aria-hidden": "true" }, sorted === "asc" ? " ↑" : " ↓") : null));
  };
  const body = el("tbody");
  const root = el("div", { class: "table-wrap" }, el("table", { class: "collection-table" }, el("thead", {}, el("tr", {}, columns.map(header))), body));
  return {
    root,
    add(rows) {
      body.append(...rows.map((row) => el("tr", { dataset: { note: row.id } },
        el("td", {}, titleLink(row)), view.properties.map((p) => el("td", { class: `kind-${p.kind}` }, cell(view, p, row.properties[p.key]))))));
    },
  };
}

function list(view) {
  const root = el("ul", { class: "collection-list notes" });
  const shown = view.properties.filter((p) => p.kind !== "file").slice(0, 3);
  return {
    root,
    add(rows) {
      root.append(...rows.map((row) => el("li", { class: "note-row", dataset: { note: row.id } }, titleLink(row),
        el("span", { class: "types" }, summary(view, shown, row)))));
    },
  };
}

function gallery(view) {
  const root = el("div", { class: "collection-gallery" });
  const covers = "IntersectionObserver" in window ? new IntersectionObserver((entries, observer) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      observer.unobserve(entry.target);
      loadCover(view, entry.target);
    }
  }, { rootMargin: "200px" }) : null;
  const shown = view.properties.filter((p) => p.kind !== "file").slice(0, 2);
  return {
    root,
    add(rows) {
      for (const row of rows) {
        const card = el("article", { class: "gallery-card", dataset: { note: row.id } },
          el("div", { class: "cover", "aria-hidden": "true" }, el("span", {}, (row.title || "?").slice(0, 1).toUpperCase())),
          el("div", { class: "card-body" }, titleLink(row),
            el("p", { class: "quiet" }, summary(view, shown, row))));
        root.append(card);
        if (covers) covers.observe(card);
        else loadCover(view, card);
      }
    },
  };
}

// The cover is the note's first image (inline Markdown `![alt](src)`), read when the card shows.
async function loadCover(view, card) {
  try {
    const note = await view.app.api.json("GET", `/v1/notes/${card.dataset.note}`);
    for (const block of note.blocks ?? []) {
      const match = FIRST_IMAGE.exec(block.text ?? "");
      if (!match) continue;
      const cover = card.querySelector(".cover");
      fill(cover, el("img", { src: match[1], alt: "", loading: "lazy", decoding: "async" }));
      cover.classList.add("has-image");
      return;
    }
  } catch {
    // the card keeps its letter: a cover is decoration
  }
}

function board(view) {
  const key = view.view.query.group_by;
  const prop = view.properties.find((p) => p.key === key);
  const root = el("div", { class: "collection-board" });
  const columns = new Map();
  const name = (value) => (prop?.kind === "person" && value ? personLabel(view, value) : groupName(value));
  const column = (value) => {
    const id = JSON.stringify(value ?? null);
    if (columns.has(id)) return columns.get(id);
    const cards = el("div", { class: "cards" });
    const count = el("span", { class: "count" }, "0");
    const section = el("section", { class: "board-column", dataset: { group: value ?? "" }, "aria-label": name(value) },
      el("h4", {}, el("span", {}, name(value)), count), cards);
    section.addEventListener("dragover", (event) => {
      if (!event.dataTransfer.types.includes("text/x-fastpad-card")) return;
      event.preventDefault();
      section.classList.add("drop-here");
    });
    section.addEventListener("dragleave", () => section.classList.remove("drop-here"));
    section.addEventListener("drop", (event) => {
      section.classList.remove("drop-here");
      const noteId = event.dataTransfer.getData("text/x-fastpad-card");
      const card = root.querySelector(`.board-card[data-note="${noteId}"]`);
      if (!card || card.closest(".board-column") === section) return;
      event.preventDefault();
      move(card, value);
    });
    const entry = { section, cards, count, value };
    columns.set(id, entry);
    root.append(section);
    return entry;
  };
  const recount = () => columns.forEach((c) => (c.count.textContent = String(c.cards.childElementCount)));
  // Moved on screen first, then written through the typed-properties API.
  const move = (card, value) => {
    column(value).cards.prepend(card);
    recount();
    const picker = card.querySelector("select");
    if (picker) picker.value = JSON.stringify(value ?? null);
    view.moveCard(card.dataset.note, value);
  };
  const values = prop?.kind === "select" ? prop.options : prop?.kind === "checkbox" ? [true, false] : [];
  for (const value of values) column(value);
  if (prop?.kind !== "checkbox") column(null);
  const shown = view.properties.filter((p) => p.key !== key && p.kind !== "file" && p.kind !== "multi_select").slice(0, 2);
  const touch = matchMedia("(pointer: coarse)").matches;
  return {
    root,
    readsAll: true,
    add(rows) {
      const byColumn = new Map();
      for (const row of rows) {
        const value = prop?.kind === "checkbox" ? Boolean(row.group) : row.group ?? null;
        const target = column(value);
        // On a touch screen there is no dragging: each card says where it can go instead.
        const picker = touch ? el("select", { class: "move-to", "aria-label": "Move to" },
          [...columns.values()].map((c) => el("option", { value: JSON.stringify(c.value ?? null), selected: c === target }, name(c.value)))) : null;
        const card = el("article", { class: "board-card", draggable: "true", dataset: { note: row.id } }, titleLink(row),
          shown.length ? el("p", { class: "quiet" }, summary(view, shown, row)) : null,
          picker);
        picker?.addEventListener("change", () => move(card, JSON.parse(picker.value)));
        card.addEventListener("dragstart", (event) => {
          event.dataTransfer.setData("text/x-fastpad-card", row.id);
          event.dataTransfer.effectAllowed = "move";
        });
        if (!byColumn.has(target)) byColumn.set(target, []);
        byColumn.get(target).push(card);
      }
      for (const [target, cards] of byColumn) target.cards.append(...cards);
      recount();
    },
  };
}

function groupName(value) {
  if (value === true) return "Yes";
  if (value === false) return "No";
  return value === null || value === undefined || value === "" ? "No value" : String(value);
}

// A month grid, Monday first; only the month's rows are read (window_start … window_end).
function calendar(view) {
  const start = view.view.layout_options.start;
  const month = view.month;
  const next = addMonths(month, 1);
  const days = new Map();
  const first = (month.getUTCDay() + 6) % 7; // Monday = 0
  const cells = [];
  for (let i = 0; i < first; i++) cells.push(el("div", { class: "day outside", "aria-hidden": "true" }));
  for (let day = new Date(month); day < next; day = new Date(day.getTime() + DAY_MS)) {
    const list = el("ul", { class: "day-rows" });
    days.set(isoDate(day), list);
    const today = isoDate(day) === isoDate(new Date());
    cells.push(el("div", { class: `day${today ? " today" : ""}`, dataset: { date: isoDate(day) } }, el("span", { class: "day-number" }, String(day.getUTCDate())), list));
  }
  while (cells.length % 7) cells.push(el("div", { class: "day outside", "aria-hidden": "true" }));
  const root = el("div", { class: "collection-calendar" },
    monthNav(view, monthName(month), 1),
    el("div", { class: "weekdays", "aria-hidden": "true" }, ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map((d) => el("span", {}, d))),
    el("div", { class: "month-grid" }, cells));
  return {
    root,
    readsAll: true,
    add(rows) {
      for (const row of rows) {
        const at = new Date(row.properties[start]);
        const day = at < month ? month : at; // a span that began earlier shows on the first
        days.get(isoDate(day))?.append(el("li", { class: "event", dataset: { note: row.id } }, titleLink(row)));
      }
    },
  };
}

// One lane per row, its title beside a bar from start to end over three months; a bar cut by
// the window's edge says it goes on.
function timeline(view) {
  const { start, end } = view.view.layout_options;
  const from = view.month;
  const to = addMonths(from, TIMELINE_MONTHS);
  const span = to - from;
  const ticks = Array.from({ length: TIMELINE_MONTHS }, (_, i) => addMonths(from, i));
  const lanes = el("div", { class: "lanes" });
  const root = el("div", { class: "collection-timeline" },
    monthNav(view, `${monthName(from)} – ${monthName(addMonths(to, -1))}`, 1),
    el("div", { class: "lane ticks", "aria-hidden": "true" }, el("span", { class: "lane-label" }),
      el("div", { class: "track" }, ticks.map((tick) => place(el("span", {}, monthName(tick, true)), (tick - from) / span)))),
    lanes);
  return {
    root,
    readsAll: true,
    add(rows) {
      lanes.append(...rows.map((row) => {
        const begins = new Date(row.properties[start]);
        const ends = new Date(Math.max(end && row.properties[end] ? Date.parse(row.properties[end]) : 0, begins.getTime() + DAY_MS));
        const left = clamp((begins - from) / span);
        const width = Math.max(0.01, clamp((ends - from) / span) - left);
        const bar = place(el("div", {
          class: `bar${begins < from ? " before" : ""}${ends > to ? " after" : ""}`,
          title: `${row.title || "Untitled"}: ${row.properties[start]}${end && row.properties[end] ? ` → ${row.properties[end]}` : ""}`,
        }), left, width);
        return el("div", { class: "lane", dataset: { note: row.id } }, el("span", { class: "lane-label" }, titleLink(row)), el("div", { class: "track" }, bar));
      }));
    },
  };
}

// Through the CSSOM: the shell's CSP refuses style attributes.
function place(element, left, width = null) {
  element.style.left = `${left * 100}%`;
  if (width !== null) element.style.width = `${width * 100}%`;
  return element;
}

function clamp(fraction) {
  return Math.min(1, Math.max(0, fraction));
}

// The window a calendar (its month) or a timeline (three months from it) reads; null elsewhere.
function windowOf(layout, month) {
  const months = { calendar: 1, timeline: TIMELINE_MONTHS }[layout];
  return months ? { window_start: isoDate(month), window_end: isoDate(addMonths(month, months)) } : null;
}

function monthNav(view, label, step) {
  return el("div", { class: "window-nav" },
    el("button", { type: "button", "aria-label": "Earlier", onclick: () => view.setMonth(addMonths(view.month, -step)) }, "‹"),
    el("span", { class: "window-label" }, label),
    el("button", { type: "button", "aria-label": "Later", onclick: () => view.setMonth(addMonths(view.month, step)) }, "›"),
    el("button", { type: "button", class: "link", onclick: () => view.setMonth(startOfMonth(new Date())) }, "Today"));
}

// ---------------------------------------------------------------------- values

// A person property's value is a member's id: shown by their name (the view reads the people
// before its rows when its type has a person property).
function personLabel(view, personId) {
  const person = view.people?.find((p) => p.id === personId);
  return person ? nameOf(person) : view.people?.length ? "Former member" : personId;
}

// A property's value as a card or a row shows it, beside others.
function shownValue(view, prop, value) {
  return prop.kind === "person" ? personLabel(view, value) : formatValue(value);
}

// The values a card or a row shows under its title, the empty ones left out.
function summary(view, shown, row) {
  return shown.filter((p) => ![null, undefined, ""].includes(row.properties[p.key]))
    .map((p) => shownValue(view, p, row.properties[p.key])).join(" · ");
}

function cell(view, prop, value) {
  if (value === null || value === undefined || value === "") return "";
  if (prop.kind === "relation") {
    const target = view.app.index.notes.get(value);
    return link(`/notes/${value}`, target?.title || "Linked note");
  }
  if (prop.kind === "person") return personLabel(view, value);
  if (prop.kind === "url") return el("a", { href: value, rel: "noopener noreferrer", target: "_blank" }, value);
  if (prop.kind === "checkbox") return value ? "✓" : "";
  return formatValue(value);
}


function opName(op, prop) {
  return (TIME_KINDS.has(prop?.kind) ? TIME_OPS : OPS)[op] ?? op;
}

function opsFor(prop) {
  if (!prop) return [];
  if (prop.kind === "multi_select") return ["contains", "has", "has_not"];
  if (prop.kind === "checkbox") return ["eq"];
  const ops = ["eq", "neq"];
  if (["number", "date", "datetime"].includes(prop.kind)) ops.push("lt", "gt");
  return [...ops, "has", "has_not"];
}

function valueInput(prop) {
  if (prop.kind === "select" || prop.kind === "multi_select") return el("select", { "aria-label": "Filter value" }, prop.options.map((o) => el("option", { value: o }, o)));
  if (prop.kind === "checkbox") return el("select", { "aria-label": "Filter value" }, el("option", { value: "true" }, "yes"), el("option", { value: "false" }, "no"));
  const type = { number: "number", date: "date", datetime: "datetime-local" }[prop.kind] ?? "text";
  return el("input", { type, "aria-label": "Filter value", required: true, step: prop.kind === "number" ? "any" : undefined });
}

function readValue(prop, raw) {
  if (prop.kind === "number") return Number(raw);
  if (prop.kind === "checkbox") return raw === "true";
  if (prop.kind === "datetime") return new Date(raw).toISOString();
  return raw;
}

// ---------------------------------------------------------------------- months (UTC, as dates are indexed)

export function startOfMonth(date) {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1));
}

function addMonths(month, count) {
  return new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + count, 1));
}

function isoDate(date) {
  return date.toISOString().slice(0, 10);
}

function monthName(month, short = false) {
  return month.toLocaleDateString([], { month: short ? "short" : "long", year: "numeric", timeZone: "UTC" });
}
