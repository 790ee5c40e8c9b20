// A person mention in block text, one to one with fastpad/notes/mentions.py:
// `[@Display Name](/people/{person id})` — an ordinary CommonMark link, so it is block text
// like any other to the document, the serializer and `fp pull`/`fp push`. The person is the id;
// the name is what it read when the mention was made.

export const MAX_SHOWN_NAME = 120;

const ULID = "[0-7][0-9A-HJKMNP-TV-Z]{25}";
const PERSON_MENTION = new RegExp(`(?<!\\\\)\\[@([^\\[\\]\\n]{1,${MAX_SHOWN_NAME}})\\]\\(/people/(${ULID})\\)`, "g");
const CODE_SPAN = /(`+)(?:(?!\1).)+?\1/gs;

// The text that mentions `personId`, showing `name` (brackets and line breaks become spaces;
// a blank name shows the id).
export function personMention(personId, name) {
  const shown = (name ?? "").replace(/[[\]]/g, " ").split(/\s+/).filter(Boolean).join(" ").slice(0, MAX_SHOWN_NAME).trim();
  return `[@${shown || personId}](/people/${personId})`;
}

// The person mentions written in a block, in order: [{personId, name, start, end}]. Offsets are
// UTF-16 code units (Python's are code points: the same for text without astral characters).
export function personMentions(blockType, text) {
  if (blockType === "code" || !text.includes("](/people/")) return [];
  const scan = text.includes("`") ? text.replace(CODE_SPAN, (span) => " ".repeat(span.length)) : text;
  return [...scan.matchAll(PERSON_MENTION)].map((m) => ({ personId: m[2], name: m[1], start: m.index, end: m.index + m[0].length }));
}

// `text` with each person mention written as `@Name` alone (a list of excerpts shows it so).
export function mentionsAsText(blockType, text) {
  let shown = "";
  let at = 0;
  for (const mention of personMentions(blockType, text)) {
    shown += `${text.slice(at, mention.start)}@${mention.name}`;
    at = mention.end;
  }
  return shown + text.slice(at);
}
