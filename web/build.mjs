// Bundles the browser app (web/src/main.js) into fastpad/web/static: `make web` after any change
// to web/src or web/package-lock.json, then commit what it wrote.
// The output is committed as package data so `make run` and a pip install serve the app with no
// Node at all; tests/web/test_bundle.py rebuilds it and fails unless the rebuild is byte-identical.
// Usage: node web/build.mjs [OUTDIR]   (default fastpad/web/static; a relative OUTDIR is from the cwd)
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import * as esbuild from "esbuild";

const WEB = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(WEB);
const outdir = path.resolve(process.argv[2] ?? path.join(ROOT, "fastpad", "web", "static"));
const MANIFEST = "manifest.json";

const result = await esbuild.build({
  absWorkingDir: WEB, // metafile paths, and so the output, do not depend on where the build runs
  entryPoints: ["src/main.js", "src/sw.js"], // the app, and its service worker (served at /sw.js)
  bundle: true,
  format: "esm",
  minify: true,
  target: "es2022",
  loader: { ".wasm": "file" },
  entryNames: "[name]-[hash]",
  assetNames: "[name]-[hash]",
  outdir,
  metafile: true,
  // Licence comments stay, gathered at the end of each file, for anyone reading the served code.
  legalComments: "eof",
  // No source map: it would double what is committed, and the sources are in the repository.
  sourcemap: false,
  write: false,
  logLevel: "warning",
});

// Logical name -> hashed file name: the entry's JS and CSS by the entry's name, every other
// asset (the wasm) by the name of the file it came from.
const manifest = {};
for (const [output, meta] of Object.entries(result.metafile.outputs)) {
  const file = path.basename(output);
  if (meta.entryPoint) {
    const name = path.basename(meta.entryPoint, path.extname(meta.entryPoint));
    manifest[`${name}.js`] = file;
    if (meta.cssBundle) manifest[`${name}.css`] = path.basename(meta.cssBundle);
  } else if (!file.endsWith(".css")) {
    const inputs = Object.keys(meta.inputs);
    if (inputs.length !== 1) throw new Error(`${output}: expected one input, got ${inputs.join(", ")}`);
    manifest[path.basename(inputs[0])] = file;
  }
}
const sorted = Object.fromEntries(Object.entries(manifest).sort(([a], [b]) => a.localeCompare(b)));

// This build owns the files the previous manifest named (and the manifest); anything else in
// the directory is someone else's and stays.
await mkdir(outdir, { recursive: true });
const fresh = new Set(result.outputFiles.map((f) => path.basename(f.path)));
try {
  const previous = JSON.parse(await readFile(path.join(outdir, MANIFEST), "utf8"));
  for (const file of Object.values(previous)) {
    if (!fresh.has(file)) await rm(path.join(outdir, path.basename(file)), { force: true });
  }
} catch (error) {
  if (error.code !== "ENOENT") throw error;
}
for (const file of result.outputFiles) await writeFile(file.path, file.contents);
await writeFile(path.join(outdir, MANIFEST), JSON.stringify(sorted, null, 2) + "\n");

for (const file of result.outputFiles) {
  const raw = file.contents.length;
  const gzip = gzipSync(file.contents, { level: 9 }).length;
  console.log(`${path.basename(file.path)}\t${raw} B\t${gzip} B gzip`);
}
