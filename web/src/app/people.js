// The workspace's people (GET /v1/members), read once per page load and shared: the `@` menu
// offers them beside notes, a person property offers them as its choices, and anything that
// shows a person id (a property's value, a mention's writer) shows their name instead.
export class People {
  constructor(api) {
    this.api = api;
    this.loaded = null;
  }

  // [{id, display_name, email, role}]; a failed read is read again next time it is asked for.
  list() {
    this.loaded ??= this.api.json("GET", "/v1/members").then((page) => page.items, (error) => {
      this.loaded = null;
      throw error;
    });
    return this.loaded;
  }

  // Up to `limit` people whose name or email starts a word with `query` (case-insensitive),
  // those whose name starts with it first.
  async match(query, limit) {
    const wanted = query.trim().toLowerCase();
    const people = await this.list();
    if (!wanted) return people.slice(0, limit);
    const rank = (person) => {
      const name = nameOf(person).toLowerCase();
      if (name.startsWith(wanted)) return 0;
      if (name.split(/\s+/).some((word) => word.startsWith(wanted))) return 1;
      return person.email.toLowerCase().startsWith(wanted) ? 2 : 3;
    };
    return people.map((person) => [rank(person), person]).filter(([rank]) => rank < 3)
      .sort((a, b) => a[0] - b[0]).slice(0, limit).map(([, person]) => person);
  }
}

// What to call a person: their display name, or their email when they chose none.
export function nameOf(person) {
  return person.display_name || person.email;
}
