// The service worker: keeps the app's shell and bundle on this device so a note opened
// before reopens with no connection (its content comes from IndexedDB, see
// sync/device_store.js). API calls always go to the network; the shell is fetched fresh
// when the network answers and served from the cache only when it does not.
// self.FASTPAD_ASSETS (the bundle's hashed files) is prepended by the server (fastpad/web/app.py).
// One cache per build: the names are content-hashed, so their list names the build.
const CACHE = `fastpad-${[...self.FASTPAD_ASSETS.join(",")].reduce((hash, c) => (hash * 31 + c.charCodeAt(0)) >>> 0, 7)}`;
const SHELL = "/";
const APP_PATH = /^\/(?:$|notes\/|inbox$|archive$|trash$|types\/|search$)/;

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll([...self.FASTPAD_ASSETS, SHELL]))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name))))
      // The shell's request starts while this worker starts up, not after.
      .then(() => self.registration.navigationPreload?.enable())
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.origin !== self.location.origin) return;
  if (url.pathname.startsWith("/static/")) {
    event.respondWith(caches.match(event.request).then((hit) => hit ?? fetch(event.request)));
  } else if (event.request.mode === "navigate" && APP_PATH.test(url.pathname)) {
    event.respondWith(
      Promise.resolve(event.preloadResponse)
        .then((preloaded) => preloaded ?? fetch(event.request))
        .then((response) => {
          // The signed-out shell (a note kept in this browser only) is never the one to reopen offline.
          const keep = response.ok && !response.redirected && !response.headers.has("x-fastpad-local-shell");
          if (keep) caches.open(CACHE).then((cache) => cache.put(SHELL, response.clone()));
          return response;
        })
        .catch(() => caches.match(SHELL).then((hit) => hit ?? Response.error())),
    );
  }
});
