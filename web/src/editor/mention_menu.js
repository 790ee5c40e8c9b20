// What the `[[` and `@` menu offers and what a choice writes. A choice is a note {id, title}
// or, for `@`, a person {person: {id, name, email}}: a note becomes a link (`[[Title]]`,
// `@[[Title]]`), a person a person mention (`[@Name](/people/{id})`, model/mentions.js), which
// puts the mention in their Inbox once the edit is saved.
import { personMention } from "../model/mentions.js";

// How the menu shows a choice: a person with their email beside the name.
export function choiceLabel(item) {
  return item.person ? { label: `@${item.person.name}`, detail: item.person.email, kind: "person" } : item.title || "Untitled";
}

// The text a choice puts in place of what was typed since the trigger.
export function choiceText(triggerKind, item) {
  if (item.person) return personMention(item.person.id, item.person.name);
  const title = item.title.replace(/[[\]|\n]/g, " ").trim() || item.id;
  return triggerKind === "mention" ? `@[[${title}]]` : `[[${title}]]`;
}
