// The browser app's entry: load Loro's wasm, read what the server's shell handed us (the
// session's CSRF token), start the app, and register the service worker that lets a note
// opened before be reopened with no connection. Signed out, the shell at `/` starts the page
// of a note kept in this browser only instead (app/local_app.js), which a sign-in adopts.
import "./app/style.css";
import init from "loro-crdt/web";
import wasmUrl from "loro-crdt/web/loro_wasm_bg.wasm";
import { prefetchFor, startApp } from "./app/app.js";
import { startLocalApp } from "./app/local_app.js";
import { openLocalNotes } from "./local/note_store.js";
import { Api } from "./sync/api.js";
import { openDeviceStore } from "./sync/device_store.js";

const config = JSON.parse(document.getElementById("fastpad-config").textContent);
const root = document.getElementById("app");
// The notes kept in this browser: the page's note signed out, what is adopted signed in.
const localNotes = openLocalNotes();
if (config.signedIn) {
  const api = new Api({ csrfToken: config.csrfToken, workspaceId: config.workspaceId });
  // What this page will need — its first requests, the device store — is on its way while the wasm compiles.
  prefetchFor(api, location.pathname);
  const store = openDeviceStore();
  await init({ module_or_path: new URL(wasmUrl, import.meta.url) });
  await startApp(root, config, { api, store, localNotes });
  if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(() => {});
} else {
  await init({ module_or_path: new URL(wasmUrl, import.meta.url) });
  await startLocalApp(root, localNotes);
}
