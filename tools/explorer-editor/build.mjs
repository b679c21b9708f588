// Builds the explorer's editor: `npm ci && npm run build` writes
//   sparsetir/explorer/static/editor.js           CodeMirror 6 and src/editor.js, one minified IIFE
//   sparsetir/explorer/static/editor.LICENSES.txt the license of every package bundled in it
// Both are committed: installing or testing sparsetir needs no npm. The versions are pinned in
// package.json and package-lock.json, so a rebuild gives the same bundle.
import { build } from "esbuild";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "..", "sparsetir", "explorer", "static");

const result = await build({
  entryPoints: [join(here, "src", "editor.js")],
  bundle: true,
  minify: true,
  format: "iife",
  globalName: "SparsetirEditor",
  target: ["es2020"],
  legalComments: "none", // the licenses are in editor.LICENSES.txt
  metafile: true,
  outfile: join(out, "editor.js"),
});

// Every package a bundled file came from, with its version and license text.
const packages = new Map();
for (const input of Object.keys(result.metafile.inputs)) {
  const found = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (found) packages.set(found[1], join(here, "node_modules", found[1]));
}
const sections = [...packages].sort(([a], [b]) => a.localeCompare(b)).map(([name, dir]) => {
  const meta = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const file = readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
  if (!file) throw new Error(`${name} has no license file`);
  return `${name} ${meta.version} (${meta.license})\n\n${readFileSync(join(dir, file), "utf8").trim()}\n`;
});
writeFileSync(join(out, "editor.LICENSES.txt"),
  "sparsetir/explorer/static/editor.js bundles these packages (tools/explorer-editor builds it):\n\n" +
  sections.join("\n" + "-".repeat(78) + "\n\n"));
console.log(`editor.js: ${packages.size} packages: ${[...packages.keys()].join(", ")}`);
