import type { z } from "zod";

/**
 * A document that parses but cannot be accepted (duplicate ids or keys, logic rules that do not fit it).
 * The message names the path; `problems` lists each problem by its path (`document.logic[2].then[0]`).
 */
export class DocumentError extends Error {
  override name = "DocumentError";
  readonly problems: readonly { path: string; message: string }[];
  constructor(message: string, problems: readonly { path: string; message: string }[] = []) {
    super(message);
    this.problems = problems;
  }
}

type PathSegment = PropertyKey;

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `root` followed by the path: `document.blocks[2].options`. */
export function formatPath(root: string, path: readonly PathSegment[]): string {
  let out = root;
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (typeof segment === "string" && identifier.test(segment)) out += out ? `.${segment}` : segment;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}

function describeIssue(issue: z.core.$ZodIssue, root: string): string {
  const at = (path: readonly PathSegment[], message: string) => {
    const where = formatPath(root, path);
    return where ? `${where}: ${message}` : message;
  };
  switch (issue.code) {
    case "unrecognized_keys":
      if (issue.keys.length === 1) return at([...issue.path, issue.keys[0]], "unknown property");
      return at(issue.path, `unknown properties ${issue.keys.map((k) => `"${k}"`).join(", ")}`);
    case "invalid_union":
      if ("discriminator" in issue && issue.discriminator && "options" in issue && Array.isArray(issue.options)) {
        return at(issue.path, `must be one of ${issue.options.join(", ")}`);
      }
      return at(issue.path, issue.message);
    case "invalid_type":
      if (/received undefined$/.test(issue.message)) return at(issue.path, `is required (${issue.expected})`);
      return at(issue.path, issue.message);
    default:
      return at(issue.path, issue.message);
  }
}

/**
 * One line describing what is wrong, each problem prefixed by its path under `root`
 * (for example `document.blocks[0].question: Too small: ...`). At most three problems are named, one per path.
 */
export function describeZodError(err: z.ZodError | { issues: readonly z.core.$ZodIssue[] }, root = ""): string {
  // One problem per path: an empty string is both too short and blank; the first says enough.
  const byPath = new Map<string, z.core.$ZodIssue>();
  for (const issue of err.issues) {
    const path = JSON.stringify(issue.path.map((s) => (typeof s === "symbol" ? String(s) : s)));
    // Unknown properties are reported on their object's path, beside its own problems.
    const slot = issue.code === "unrecognized_keys" ? `${path}+keys` : path;
    if (!byPath.has(slot)) byPath.set(slot, issue);
  }
  const issues = [...byPath.values()];
  if (issues.length === 0) return root ? `${root}: invalid` : "invalid";
  const shown = issues.slice(0, 3).map((issue) => describeIssue(issue, root));
  const more = issues.length - shown.length;
  return shown.join("; ") + (more > 0 ? ` (and ${more} more)` : "");
}

/**
 * The params that mark a refinement's issue as a field violation: a problem a person fixes at one field
 * of the app (a theme's colour, a thank-you screen's link), which the API lists by path in its error's
 * `fields` besides naming it in the message.
 */
export const fieldViolationParams = { fieldViolation: true } as const;

/** The issues of `err` marked with `fieldViolationParams`, each by its path under `root`. */
export function fieldViolationsOf(err: z.ZodError | { issues: readonly z.core.$ZodIssue[] }, root = ""): { path: string; message: string }[] {
  return err.issues
    .filter((issue) => issue.code === "custom" && (issue as { params?: { fieldViolation?: unknown } }).params?.fieldViolation === true)
    .map((issue) => ({ path: formatPath(root, issue.path), message: issue.message }));
}
