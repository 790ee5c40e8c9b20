// A note's version on the wire, as fastpad/notes/frontier.py: "fp1:" + unpadded base64url
// of Loro's encoded frontiers (JS encodeFrontiers is byte-identical to Python's encode()).
import { decodeFrontiers, encodeFrontiers } from "loro-crdt/web";

const PREFIX = "fp1:";

export function frontierToString(frontiers) {
  const bytes = encodeFrontiers(frontiers);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return PREFIX + btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function frontierFromString(text) {
  if (typeof text !== "string" || !text.startsWith(PREFIX)) throw new Error(`not a frontier: ${text}`);
  const payload = text.slice(PREFIX.length).replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(payload + "=".repeat((4 - (payload.length % 4)) % 4));
  return decodeFrontiers(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}
