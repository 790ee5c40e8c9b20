// The published HTTP API, as the app uses it: the session cookie is the credential, and
// every mutation carries the session's CSRF token. Every request names the workspace this page
// was opened in (x-fastpad-workspace), so a tab keeps acting there after the person switched the
// browser's session into another of their workspaces elsewhere. A failure is an ApiError holding the
// problem document's slug, status and hints, or `offline` when nothing answered.

export class ApiError extends Error {
  constructor({ status = 0, slug = "offline", title = "", detail = "", problem = null, retryAfterMs = null }) {
    super(detail || title || slug);
    this.status = status;
    this.slug = slug;
    this.problem = problem;
    this.retryAfterMs = retryAfterMs;
  }

  get offline() {
    return this.slug === "offline";
  }
}

export class Api {
  constructor({ csrfToken, workspaceId = null, base = "" }) {
    this.csrfToken = csrfToken;
    this.workspaceId = workspaceId;
    this.base = base;
    this.early = new Map(); // URL -> a GET already on its way (prefetch)
    // Called at a 401 (signed out elsewhere, or the person was removed), and at the first answer
    // after it that is not one (signed in again, in another tab).
    this.sessionEnded = false;
    this.onSessionEnded = () => {};
    this.onSessionResumed = () => {};
  }

  // Starts a GET before anything asks for it (while the wasm compiles, say); the first
  // request for the same URL takes its answer instead of asking again.
  prefetch(path, { query, accept = "application/json" } = {}) {
    const url = this._url(path, query);
    if (this.early.has(url.href)) return;
    const answer = fetch(url, this._init("GET", { accept }));
    answer.catch(() => {}); // a failure is the asker's to handle, once it asks
    this.early.set(url.href, answer);
  }

  _url(path, query) {
    const url = new URL(this.base + path, location.origin);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      for (const item of [].concat(value)) url.searchParams.append(key, String(item));
    }
    return url;
  }

  // `json` is sent as JSON; `bytes` (an ArrayBuffer or Blob: a part of an archive, a file) as
  // they are, as `contentType`.
  // `keepalive` lets a request outlive its page (a closing tab saying it left).
  _init(method, { json, bytes, contentType = "application/octet-stream", accept = "application/json", signal, keepalive } = {}) {
    const headers = { accept };
    if (this.workspaceId) headers["x-fastpad-workspace"] = this.workspaceId;
    if (method !== "GET") headers["x-csrf-token"] = this.csrfToken;
    if (json !== undefined) headers["content-type"] = "application/json";
    if (bytes !== undefined) headers["content-type"] = contentType;
    const body = json !== undefined ? JSON.stringify(json) : bytes;
    return { method, headers, body, credentials: "same-origin", cache: "no-store", signal, keepalive };
  }

  // A mutation refused for its CSRF token means this page outlived its session (the person
  // signed in again elsewhere): read the current session's token and send it once more.
  async request(method, path, options = {}) {
    try {
      return await this._send(method, path, options);
    } catch (error) {
      if (method === "GET" || error.status !== 403 || error.problem?.reason !== "csrf") throw error;
      const session = await (await this._send("GET", "/v1/session", {})).json();
      this.csrfToken = session.csrf_token;
      return this._send(method, path, options);
    }
  }

  async _send(method, path, { json, bytes, contentType, query, accept = "application/json", signal, keepalive } = {}) {
    const url = this._url(path, query);
    const early = method === "GET" ? this.early.get(url.href) : undefined;
    this.early.delete(url.href);
    let response;
    try {
      response = await (early ?? fetch(url, this._init(method, { json, bytes, contentType, accept, signal, keepalive })));
    } catch (error) {
      if (error?.name === "AbortError") throw error;
      throw new ApiError({ detail: "The server could not be reached." });
    }
    if ((response.status === 401) !== this.sessionEnded) {
      this.sessionEnded = !this.sessionEnded;
      (this.sessionEnded ? this.onSessionEnded : this.onSessionResumed)();
    }
    if (!response.ok) throw await problemOf(response);
    return response;
  }

  async json(method, path, options) {
    const response = await this.request(method, path, options);
    return response.status === 204 ? null : response.json();
  }
}

async function problemOf(response) {
  let problem = null;
  try {
    problem = await response.json();
  } catch {
    // not a problem document: a proxy's page, a crash
  }
  const slug = typeof problem?.type === "string" ? problem.type.split("/").pop() : `http-${response.status}`;
  const header = Number(response.headers.get("retry-after"));
  const retryAfterMs = problem?.retry_after_ms ?? (Number.isFinite(header) && header > 0 ? header * 1000 : null);
  return new ApiError({ status: response.status, slug, title: problem?.title, detail: problem?.detail, problem, retryAfterMs });
}

export function toBase64(bytes) {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export async function sha256Hex(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
