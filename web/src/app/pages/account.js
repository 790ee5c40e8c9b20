// Your account: the display name (PATCH /v1/account), the password (POST /v1/account/password —
// the server signs the other sessions out, and the page says how many), and Sessions: where you
// are signed in (GET /v1/sessions: browser, the workspace it acts in, since when, last seen, which one is this), each with
// Sign out (DELETE /v1/sessions/{id}). This one is signed out by the sidebar's Sign out, which
// also clears what the device kept.
import { explain } from "../explain.js";
import { el, fill, idempotencyKey, when } from "../dom.js";

export function accountPage(app) {
  const message = el("p", { role: "status" });
  const say = (text, failed = false) => fill(message, el("span", { class: failed ? "error" : "quiet" }, text));
  const name = el("input", { type: "text", name: "display_name", required: true, maxLength: 200 });
  const email = el("p", { class: "quiet" });
  const nameForm = el("form", { class: "search-form" }, el("label", {}, "Display name ", name), el("button", { type: "submit" }, "Save name"));
  nameForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const me = await app.api.json("PATCH", "/v1/account", { json: { display_name: name.value, idempotencyKey: idempotencyKey() } });
      say(`Your name is now “${me.display_name}”.`);
    } catch (error) {
      say(explain(error, "Your name could not be changed"), true);
    }
  });

  const current = el("input", { type: "password", name: "current_password", required: true, autocomplete: "current-password" });
  const next = el("input", { type: "password", name: "new_password", required: true, minLength: 8, autocomplete: "new-password" });
  const passwordForm = el("form", { class: "search-form" },
    el("label", {}, "Current password ", current), el("label", {}, "New password ", next), el("button", { type: "submit" }, "Change password"));
  passwordForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const { sessions_ended: ended } = await app.api.json("POST", "/v1/account/password",
        { json: { current_password: current.value, new_password: next.value, idempotencyKey: idempotencyKey() } });
      passwordForm.reset();
      say(`Password changed.${ended ? ` ${ended === 1 ? "One other session was" : `${ended} other sessions were`} signed out.` : ""}`);
      loadSessions();
    } catch (error) {
      say(explain(error, "The password could not be changed"), true);
    }
  });

  const sessions = el("tbody");
  app.show("Your account", el("section", { class: "list account" },
    el("h1", {}, "Your account"), email, message,
    nameForm,
    el("h2", {}, "Password"), passwordForm,
    el("h2", {}, "Sessions"),
    el("table", { class: "sessions-table" },
      el("thead", {}, el("tr", {}, ...["Browser", "Workspace", "Signed in", "Last seen", ""].map((h) => el("th", { scope: "col" }, h)))), sessions)));

  const loadSessions = async () => {
    try {
      const { items } = await app.api.json("GET", "/v1/sessions");
      fill(sessions, items.map((session) => sessionRow(app, session, { say, reload: loadSessions })));
    } catch (error) {
      say(explain(error, "Your sessions could not be listed"), true);
    }
  };
  app.api.json("GET", "/v1/account").then((me) => {
    name.value = me.display_name;
    email.textContent = `${me.email} · ${me.role} in this workspace`;
  }, (error) => say(explain(error, "Your account could not be read"), true));
  loadSessions();
  return null;
}

function sessionRow(app, session, { say, reload }) {
  const signOut = el("button", { type: "button" }, "Sign out");
  signOut.addEventListener("click", async () => {
    try {
      await app.api.json("DELETE", `/v1/sessions/${session.id}`);
      say("That session was signed out.");
    } catch (error) {
      say(explain(error, "That session could not be signed out"), true);
    }
    reload();
  });
  return el("tr", { dataset: { session: session.id, current: session.current ? "yes" : "no" } },
    el("td", {}, browserName(session.user_agent), session.current ? el("strong", {}, " · this one") : ""),
    el("td", {}, session.workspace_name),
    el("td", {}, el("time", { datetime: session.created_at, title: session.created_at }, when(session.created_at))),
    el("td", {}, el("time", { datetime: session.last_seen_at, title: session.last_seen_at }, when(session.last_seen_at))),
    el("td", {}, session.current ? "" : signOut));
}

// "Chrome on Linux" from a user-agent string: enough to tell one's own devices apart.
function browserName(agent) {
  if (!agent) return "Unknown browser";
  const browser = [["Edg/", "Edge"], ["Firefox/", "Firefox"], ["Chrome/", "Chrome"], ["Safari/", "Safari"], ["curl/", "curl"]]
    .find(([mark]) => agent.includes(mark))?.[1] ?? agent.split(/[\s/]/)[0];
  const system = [["Android", "Android"], ["iPhone", "iOS"], ["iPad", "iPadOS"], ["Windows", "Windows"], ["Mac OS", "macOS"], ["Linux", "Linux"]]
    .find(([mark]) => agent.includes(mark))?.[1];
  return system ? `${browser} on ${system}` : browser;
}
