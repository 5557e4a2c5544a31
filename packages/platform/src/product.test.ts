import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { productName } from "./product.ts";

const root = join(import.meta.dirname, "../../..");

/** The files people read the name in: mail, pages, the app and the README. */
function sources(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    if (entry === "node_modules" || entry === "dist" || entry === "gen") continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) sources(path, out);
    else if (/\.(ts|tsx|js|json|html|css)$/.test(entry)) out.push(path);
  }
  return out;
}

test("the name has one spelling, the README's, in mail, pages, the app and the README", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  assert.match(readme, new RegExp(`Made with ${productName}`));
  assert.match(readme, new RegExp(`MAIL_FROM\` \\| \`${productName} <`));
  const files = ["app", "gateway/src", "services", "packages"].flatMap((dir) => sources(join(root, dir)));
  assert.ok(files.length > 100, `${files.length} files read`);
  const spellings = new RegExp(`\\b${productName}\\b`, "gi");
  const found = [readme, ...files.map((f) => readFileSync(f, "utf8"))].flatMap((text, i) =>
    text
      .split("\n")
      .filter((line) => (line.match(spellings) ?? []).some((spelling) => spelling !== productName))
      .map((line) => `${i === 0 ? "README.md" : files[i - 1]}: ${line.trim()}`),
  );
  assert.deepEqual(found, []);
});
