// `node deploy/docker/local-base.ts`: a base image for deploy/docker/Dockerfile made on this machine, for a
// machine that reaches no container registry (CI here reaches Debian's packages and npm only). A real build
// uses `node:24-slim`; this one stands in for it: Debian bookworm from debootstrap (minbase, with
// ca-certificates), the project's pinned Node (the npm `node` package's binary) and npm, and the `node` user
// (uid and gid 1000) that node:24-slim has. The machine's CA bundle replaces Debian's, so that `npm ci` inside a
// build trusts what this machine trusts. Prints the image's name.
//
// Built once and kept in podman's image store (outside the clone): its tag names what it is made from (the Debian
// suite, Node's and npm's versions) and a hash of that and of this file and the CA bundle, so a second run finds
// it and does not debootstrap again, and a change to any of them makes a new one.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

const repoRoot = resolve(import.meta.dirname, "../..");
/** The pinned Node (the npm `node` package of the root devDependencies). */
const nodeBinary = join(repoRoot, "node_modules/node/bin/node");
const caBundle = "/etc/ssl/certs/ca-certificates.crt";
const debianMirror = "http://deb.debian.org/debian";
const debianSuite = "bookworm";
const debootstrapArgs = ["--variant=minbase", "--include=ca-certificates", debianSuite];

/** podman with runc: crun cannot set a container's limits in this sandbox. */
export const podman = (args: string[], options: { quiet?: boolean } = {}): string =>
  execFileSync("podman", ["--runtime", "runc", ...args], { encoding: "utf8", stdio: ["ignore", "pipe", options.quiet ? "pipe" : "inherit"], maxBuffer: 64 * 1024 * 1024 }).trim();

/** Limits this sandbox lets a container have (it lacks CAP_SYS_RESOURCE to keep podman's higher defaults). */
export const sandboxLimits = ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1000:1000"];

function imageExists(name: string): boolean {
  try {
    podman(["image", "exists", name], { quiet: true });
    return true;
  } catch {
    return false;
  }
}

/** The local base image's name for what it is made from; built when podman does not have it yet. */
export function localBaseImage(): string {
  const nodeVersion = execFileSync(nodeBinary, ["--version"], { encoding: "utf8" }).trim().replace(/^v/, "");
  // npm is JavaScript: the machine's own (the one that installs this repository) runs on the pinned Node as well.
  const npmDir = dirname(dirname(realpathSync(execFileSync("sh", ["-c", "command -v npm"], { encoding: "utf8" }).trim())));
  const npmVersion = JSON.parse(readFileSync(join(npmDir, "package.json"), "utf8")).version as string;
  const key = createHash("sha256")
    .update(JSON.stringify({ debootstrapArgs, debianMirror, nodeVersion, npmVersion }))
    .update(readFileSync(import.meta.filename))
    .update(readFileSync(caBundle))
    .digest("hex")
    .slice(0, 12);
  const name = `localhost/formsvc-base:${debianSuite}-node${nodeVersion}-npm${npmVersion}-${key}`;
  if (imageExists(name)) return name;
  const work = mkdtempSync(join(tmpdir(), "formsvc-base-"));
  const rootfs = join(work, "rootfs");
  try {
    execFileSync("debootstrap", [...debootstrapArgs, rootfs, debianMirror], { stdio: ["ignore", "ignore", "inherit"] });
    copyFileSync(nodeBinary, join(rootfs, "usr/local/bin/node"));
    mkdirSync(join(rootfs, "usr/local/lib/node_modules"), { recursive: true });
    cpSync(npmDir, join(rootfs, "usr/local/lib/node_modules/npm"), { recursive: true, dereference: true });
    symlinkSync("../lib/node_modules/npm/bin/npm-cli.js", join(rootfs, "usr/local/bin/npm"));
    copyFileSync(caBundle, join(rootfs, caBundle));
    appendFileSync(join(rootfs, "etc/passwd"), "node:x:1000:1000::/home/node:/bin/sh\n");
    appendFileSync(join(rootfs, "etc/group"), "node:x:1000:\n");
    mkdirSync(join(rootfs, "home/node"), { recursive: true });
    execFileSync("chown", ["1000:1000", join(rootfs, "home/node")]);
    // What a container never uses (and Debian's slim images, node:24-slim's, leave out): documentation, manuals,
    // translations, apt's package lists and caches.
    for (const dir of ["usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale", "var/lib/apt/lists", "var/cache/apt", "var/cache/debconf"]) {
      rmSync(join(rootfs, dir), { recursive: true, force: true });
      mkdirSync(join(rootfs, dir), { recursive: true });
    }
    const tarball = join(work, "rootfs.tar");
    execFileSync("tar", ["-C", rootfs, "-cf", tarball, "."]);
    podman(
      ["import", "--change", `ENV NODE_EXTRA_CA_CERTS=${caBundle}`, "--change", "ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin", "--change", 'CMD ["node"]', tarball, name],
      { quiet: true },
    );
    return name;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) console.log(localBaseImage());
