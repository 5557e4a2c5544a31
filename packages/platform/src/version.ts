import { readFileSync } from "node:fs";

/**
 * The release this tree is: the `version` of the repository's root package.json, the one place it is
 * written (semantic versioning; CHANGELOG.md says what each one changed). Read once, when first imported;
 * the banner of `npm start`, the gateway's /readyz, `npm run -s cli -- version` and the image's label show it.
 */
export const version: string = readVersion(new URL("../../../package.json", import.meta.url));

export function readVersion(packageJson: URL | string): string {
  const { version } = JSON.parse(readFileSync(packageJson, "utf8")) as { version?: unknown };
  if (typeof version !== "string" || !/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.test(version)) {
    throw new Error(`${String(packageJson)} has no semantic version ("version": "1.2.3"), got ${JSON.stringify(version)}`);
  }
  return version;
}
