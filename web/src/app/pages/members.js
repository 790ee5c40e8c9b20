// Members: the workspace's people, their role and last activity (GET /v1/members). For an owner or
// admin also: invite by email with a role (POST /v1/invitations — its single-use link is shown
// here once, since the server keeps only its hash), the pending invitations with Revoke, a role
// changed by its select, a member removed after a confirmation. The server decides who may do what
// (a refusal names the role it needed, and is shown as its sentence); the page only leaves out the
// controls a member or viewer could never use.
import { explain } from "../explain.js";
import { el, fill, idempotencyKey, when } from "../dom.js";

const ROLES = ["owner", "admin", "member", "viewer"];
const INVITABLE = ["admin", "member", "viewer"]; // an owner is made by changing a member's role
const MANAGERS = ["owner", "admin"];

export function membersPage(app) {
  const manages = MANAGERS.includes(app.config.role);
  const people = el("tbody");
  const pending = el("ul", { class: "invitations" });
  const issued = el("div", { class: "issued", role: "status" });
  const message = el("p", { class: "quiet", role: "status" });
  // After an invitation, sent or refused, both lists are read again: who joined meanwhile shows.
  const invite = manages ? inviteForm(app, issued, () => Promise.all([loadMembers(), loadInvitations()])) : null;
  app.show("Members", el("section", { class: "list members" },
    el("h1", {}, "Members"),
    el("table", { class: "members-table" },
      el("thead", {}, el("tr", {}, ...["Person", "Role", "Last active", ""].map((h) => el("th", { scope: "col" }, h)))), people),
    message,
    manages ? [el("h2", {}, "Invite someone"), invite, issued, el("h2", {}, "Pending invitations"), pending] : null));

  const say = (error, doing) => fill(message, el("span", { class: "error" }, explain(error, doing)));
  const loadMembers = async () => {
    try {
      const { items } = await app.api.json("GET", "/v1/members");
      fill(people, items.map((member) => memberRow(app, member, { manages, say, reload: loadMembers })));
    } catch (error) {
      say(error, "The members could not be listed");
    }
  };
  const loadInvitations = async () => {
    try {
      const { items } = await app.api.json("GET", "/v1/invitations");
      const open = items.filter((invitation) => invitation.status === "pending");
      fill(pending, open.length ? open.map((invitation) => invitationItem(app, invitation, { say, reload: loadInvitations }))
        : el("li", { class: "quiet" }, "No invitation is waiting."));
    } catch (error) {
      say(error, "The invitations could not be listed");
    }
  };
  loadMembers();
  if (manages) loadInvitations();
  return null;
}

function inviteForm(app, issued, invited) {
  const email = el("input", { type: "email", name: "email", required: true, autocomplete: "off", "aria-label": "Email to invite", placeholder: "name@example.com" });
  const role = el("select", { name: "role", "aria-label": "Role for the invitee" },
    ...INVITABLE.map((name) => el("option", { value: name, selected: name === "member" }, name)));
  const send = el("button", { type: "submit", class: "primary" }, "Invite");
  const form = el("form", { class: "search-form invite-form" }, email, role, send);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    send.disabled = true;
    try {
      const made = await app.api.json("POST", "/v1/invitations", { json: { email: email.value, role: role.value, idempotencyKey: idempotencyKey() } });
      fill(issued, issuedLink(made));
      form.reset();
      role.value = "member";
    } catch (error) {
      fill(issued, el("p", { class: "error" }, explain(error, `${email.value} could not be invited`)));
    } finally {
      send.disabled = false;
    }
    invited();
  });
  return form;
}

// The link exists only in this answer: shown once, with a way to copy it and what became of the mail.
function issuedLink(made) {
  const field = el("input", { type: "text", readOnly: true, value: made.link, class: "invite-link", "aria-label": "Invitation link" });
  const copy = el("button", { type: "button" }, "Copy link");
  copy.addEventListener("click", async () => {
    field.select();
    try {
      await navigator.clipboard.writeText(made.link);
      copy.textContent = "Copied";
    } catch {
      copy.textContent = "Selected: press Ctrl C"; // no clipboard permission (an http origin, say)
    }
  });
  const mail = made.mailed ? `It was also mailed to ${made.email}.`
    : made.mail_error ? `Mailing it to ${made.email} failed (${made.mail_error}): pass it on yourself.`
      : `This server sends no mail: pass it on to ${made.email} yourself.`;
  return [
    el("p", {}, `Invitation link for ${made.email} (${made.role}), valid until ${when(made.expires_at)}. It is shown only this once.`),
    el("div", { class: "copy-row" }, field, copy),
    el("p", { class: "quiet" }, mail),
  ];
}

function memberRow(app, member, { manages, say, reload }) {
  const self = member.id === app.config.personId;
  const name = el("td", {}, el("strong", {}, member.display_name), self ? " (you)" : "",
    // Someone who never chose a name goes by their email: it is not shown twice.
    member.email !== member.display_name ? el("div", { class: "quiet" }, member.email) : "");
  const active = el("td", {}, member.last_active_at ? el("time", { datetime: member.last_active_at, title: member.last_active_at }, when(member.last_active_at)) : "never");
  if (!manages) return el("tr", { dataset: { person: member.id } }, name, el("td", {}, member.role), active, el("td"));
  const role = el("select", { "aria-label": `Role of ${member.display_name}` },
    ...ROLES.map((value) => el("option", { value, selected: value === member.role }, value)));
  role.addEventListener("change", async () => {
    try {
      await app.api.json("PATCH", `/v1/members/${member.id}`, { json: { role: role.value, idempotencyKey: idempotencyKey() } });
      app.flash(`${member.display_name} is now ${article(role.value)} ${role.value}.`);
    } catch (error) {
      role.value = member.role;
      say(error, `The role of ${member.display_name} could not be changed`);
    }
    reload();
  });
  const remove = el("button", { type: "button", class: "danger" }, "Remove");
  remove.addEventListener("click", async () => {
    const confirmed = window.confirm(`Remove ${member.display_name} from this workspace? They are signed out everywhere and their tokens stop working; their notes and history stay.`);
    if (!confirmed) return;
    try {
      await app.api.json("DELETE", `/v1/members/${member.id}`);
      app.flash(`${member.display_name} was removed.`);
    } catch (error) {
      say(error, `${member.display_name} could not be removed`);
    }
    reload();
  });
  return el("tr", { dataset: { person: member.id } }, name, el("td", {}, role), active, el("td", {}, self ? "" : remove));
}

function invitationItem(app, invitation, { say, reload }) {
  const revoke = el("button", { type: "button" }, "Revoke");
  revoke.addEventListener("click", async () => {
    try {
      await app.api.json("DELETE", `/v1/invitations/${invitation.id}`);
    } catch (error) {
      say(error, `The invitation for ${invitation.email} could not be revoked`);
    }
    reload();
  });
  return el("li", { dataset: { invitation: invitation.id } },
    el("span", {}, `${invitation.email} · ${invitation.role} · until ${when(invitation.expires_at)}`), " ", revoke);
}

function article(word) {
  return /^[aeiou]/.test(word) ? "an" : "a";
}
