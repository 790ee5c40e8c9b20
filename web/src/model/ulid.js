// ULIDs minted in the browser, in the same form the server mints (fastpad/notes/ids.py):
// 48 bits of milliseconds then 80 random bits, Crockford base32, 26 characters.
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const ULID_RE = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

export function newId(now = Date.now()) {
  let time = "";
  for (let i = 0, t = now; i < 10; i++, t = Math.floor(t / 32)) time = ALPHABET[t % 32] + time;
  const random = crypto.getRandomValues(new Uint8Array(16));
  let tail = "";
  for (let i = 0; i < 16; i++) tail += ALPHABET[random[i] % 32];
  return time + tail;
}

export function isUlid(value) {
  return typeof value === "string" && ULID_RE.test(value);
}
