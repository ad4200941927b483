/**
 * Builds the console's static files: esbuild bundles src/main.tsx (React, the
 * AI SDK, @dex-agents/ui) into one ES module, and the page and stylesheet (page/) are
 * copied next to it. Everything comes from node_modules; the page loads nothing
 * from another origin. Usage: `node dist/build/bundle.js OUT_DIR`.
 *
 * @module
 */

import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { build } from "esbuild";

const FILES = ["index.html", "console.css"];

async function main(out: string | undefined): Promise<void> {
  if (out === undefined) throw new Error("usage: node dist/build/bundle.js OUT_DIR");
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
  mkdirSync(out, { recursive: true });
  const result = await build({
    entryPoints: [join(root, "src", "main.tsx")],
    outfile: join(out, "app.js"),
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    legalComments: "none",
    jsx: "automatic",
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "warning",
    metafile: true,
  });
  for (const name of FILES) copyFileSync(join(root, "page", name), join(out, name));
  const html = readFileSync(join(out, "index.html"), "utf8");
  if (!html.includes('src="./app.js"')) throw new Error("page/index.html does not load ./app.js");
  const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
  console.log(`console: ${out}/app.js ${bytes} bytes`);
}

main(process.argv[2]).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
