// The browser app's entry: load Loro's wasm, read what the server's shell handed us (the
// session's CSRF token), start the app, and register the service worker that lets a note
// opened before be reopened with no connection.
import "./app/style.css";
import init from "loro-crdt/web";
import wasmUrl from "loro-crdt/web/loro_wasm_bg.wasm";
import { startApp } from "./app/app.js";

await init({ module_or_path: new URL(wasmUrl, import.meta.url) });
const config = JSON.parse(document.getElementById("fastpad-config").textContent);
await startApp(document.getElementById("app"), config);
if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(() => {});
