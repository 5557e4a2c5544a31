// The operator CLI's commands, as data: flags, the service each one calls, and how its answer is shown.
import type { Client } from "@connectrpc/connect";
import { apiKeyJson, formJson, pendingInvitationJson, planFromName, userJson, workspaceJson } from "@formsvc/api-records";
import type { AuditActionName } from "@formsvc/api-records/schemas";
import { serviceNames, type Config, type ServiceName } from "@formsvc/platform/config.ts";
import { version } from "@formsvc/platform/version.ts";
import { FormStatus, type FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { Role, type IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import type { MaintenanceService } from "@formsvc/proto/maintenance/v1/maintenance_pb.js";

export type Flags = Record<string, string>;

export interface Clients {
  identity: Client<typeof IdentityService>;
  forms: Client<typeof FormsService>;
  /** MaintenanceService, which every service with a database serves. */
  maintenance(service: ServiceName): Client<typeof MaintenanceService>;
}

export interface FlagSpec {
  /** Shown in the usage line: `--email E`; empty for a switch. */
  placeholder: string;
  /** A switch: given without a value (`--password-stdin`). */
  switch?: true;
  required?: boolean;
  /** The only values allowed, when the flag is an enumeration. */
  values?: readonly string[];
  /** The value is a point in time: see `parseTimestamp`. */
  timestamp?: true;
}

/** What the audit log records of a command's run, as the system's doing (the operator acts for the installation). */
export interface SystemAuditEvent {
  action: AuditActionName;
  targetType: string;
  targetId: string;
  workspaceId?: string;
  /** About a person rather than a workspace (an API key): recorded into each workspace of this email's account. */
  personEmail?: string;
  changes?: { field: string; value?: string }[];
}

export interface CommandSpec {
  summary: string;
  /** The audit event of a successful run, for a command that changes what a workspace's log shows. */
  audit?: (flags: Flags, output: any) => SystemAuditEvent;
  flags: Record<string, FlagSpec>;
  /**
   * The service the command calls; its address is named when it cannot be reached. A command calling several
   * throws `ServiceFailure`, which names the one that failed.
   */
  service?: ServiceName;
  run(flags: Flags, clients: Clients, input: Input, context: Context): Promise<object>;
}

/** What a command that works on the machine rather than through the services reads: the configuration (DATA_DIR, DATABASE_URL ...). */
export interface Context {
  config: Config;
  env: NodeJS.ProcessEnv;
}

/** What a command may read besides its flags. */
export interface Input {
  /** Everything on standard input, up to its end. */
  stdin(): Promise<string>;
}

/** A mistake in how the CLI was called (as opposed to a failure of the call itself). */
export class UsageError extends Error {}

/** A call that failed, of a command calling several services: which service, so its address is named. */
export class ServiceFailure extends Error {
  readonly service: ServiceName;
  constructor(service: ServiceName, cause: unknown) {
    super(`${service}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.service = service;
  }
}

/** Operator calls carry no caller header; a dead service must not hang the CLI. */
const callOptions = { timeoutMs: 30_000 };
const plans = ["free", "pro"] as const;
/** A first prune of tables left to grow for long deletes in many batches: more than a call's usual half minute. */
const pruneCallOptions = { timeoutMs: 10 * 60_000 };

const isoTimestamp = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-](\d{2}):?(\d{2})))?$/;

/**
 * An ISO 8601 timestamp: a date (its midnight UTC), or a date and time with its offset (`Z`, `+02:00`), as
 * `2026-11-01` or `2026-11-01T09:30:00Z`; undefined for anything else. A time without an offset is refused:
 * it would be read in whatever time zone the CLI runs in.
 */
export function parseTimestamp(value: string): Date | undefined {
  const parts = isoTimestamp.exec(value);
  if (!parts) return undefined;
  const [year, month, day, hours, minutes, seconds, offsetHours, offsetMinutes] = parts.slice(1).map((part) => Number(part ?? 0));
  const date = new Date(Date.UTC(year, month - 1, day));
  // Date carries 2026-02-30 over into March and 24:00 into the next day: each field must be within its range.
  const inRange = date.getUTCMonth() === month - 1 && date.getUTCDate() === day && hours < 24 && minutes < 60 && seconds < 60 && offsetHours < 24 && offsetMinutes < 60;
  return inRange ? new Date(value) : undefined;
}

function present<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the service answered without ${what}`);
  return value;
}

const plan = (flags: Flags) => planFromName(flags.plan)!; // validated against `values` before

/** `--password-stdin`: the password on standard input's first line (so `echo` and a typed line both work); never a flag, which would land in the shell's history and `ps`. */
const passwordStdin: FlagSpec = { placeholder: "", switch: true };

export async function passwordFrom(input: Input): Promise<string> {
  const password = (await input.stdin()).split(/\r?\n/, 1)[0];
  if (!password) throw new UsageError("--password-stdin: no password on standard input");
  return password;
}

/** The audit event of a command that changes a form (its answer names the form's workspace). */
const formEvent =
  (action: AuditActionName) =>
  (flags: Flags, output: { form: { workspaceId: string } }): SystemAuditEvent => ({ action, targetType: "form", targetId: flags.id, workspaceId: output.form.workspaceId });

export const commands: Record<string, CommandSpec> = {
  "user:create": {
    summary: "Creates a user with a personal workspace.",
    service: "identity",
    flags: {
      email: { placeholder: "E", required: true },
      name: { placeholder: "N" },
      plan: { placeholder: "free|pro", values: plans },
      "password-stdin": passwordStdin,
    },
    async run(flags, { identity }, input) {
      const password = flags["password-stdin"] ? await passwordFrom(input) : "";
      const res = await identity.createUser({ email: flags.email, name: flags.name ?? "", plan: plan(flags), password }, callOptions);
      return { user: userJson(present(res.user, "a user")), workspace: workspaceJson(present(res.workspace, "a workspace")) };
    },
  },
  "user:set-password": {
    summary: "Sets a user's password (read from standard input), so they can sign in to the app.",
    service: "identity",
    flags: {
      email: { placeholder: "E", required: true },
      "password-stdin": { ...passwordStdin, required: true },
    },
    async run(flags, { identity }, input) {
      const res = await identity.setPassword({ email: flags.email, password: await passwordFrom(input) }, callOptions);
      return { user: userJson(present(res.user, "a user")) };
    },
  },
  "workspace:create": {
    summary: "Creates a workspace owned by an existing user.",
    service: "identity",
    flags: {
      owner: { placeholder: "E", required: true },
      name: { placeholder: "N", required: true },
      plan: { placeholder: "free|pro", values: plans },
    },
    async run(flags, { identity }) {
      const res = await identity.createWorkspace({ ownerEmail: flags.owner, name: flags.name, plan: plan(flags) }, callOptions);
      return { workspace: workspaceJson(present(res.workspace, "a workspace")) };
    },
  },
  "user:invite": {
    summary: "Invites someone to a workspace: mails a link that signs them up into it, or adds their account when they follow it signed in (workspace:add-member adds an account at once).",
    service: "identity",
    flags: {
      workspace: { placeholder: "W", required: true },
      email: { placeholder: "E", required: true },
      role: { placeholder: "admin|member", values: ["admin", "member"] },
    },
    async run(flags, { identity }) {
      const role = flags.role === "admin" ? Role.ADMIN : Role.MEMBER;
      const res = await identity.inviteMember({ workspaceId: flags.workspace, email: flags.email, role }, callOptions);
      return pendingInvitationJson(present(res.invitation, "an invitation"));
    },
    audit: (flags, invitation) => ({
      action: "member.invite",
      targetType: "invitation",
      targetId: invitation.id,
      workspaceId: flags.workspace,
      changes: [{ field: "email", value: invitation.email }, { field: "role", value: invitation.role }],
    }),
  },
  "workspace:add-member": {
    summary: "Adds an existing user to a workspace.",
    service: "identity",
    flags: {
      workspace: { placeholder: "W", required: true },
      email: { placeholder: "E", required: true },
    },
    async run(flags, { identity }) {
      const res = await identity.addMember({ workspaceId: flags.workspace, email: flags.email }, callOptions);
      return { workspace: workspaceJson(present(res.workspace, "a workspace")), user: userJson(present(res.user, "a user")) };
    },
  },
  "workspace:set-plan": {
    summary: "Changes a workspace's plan.",
    service: "identity",
    flags: {
      workspace: { placeholder: "W", required: true },
      plan: { placeholder: "free|pro", required: true, values: plans },
    },
    async run(flags, { identity }) {
      const res = await identity.setPlan({ workspaceId: flags.workspace, plan: plan(flags) }, callOptions);
      return { workspace: workspaceJson(present(res.workspace, "a workspace")) };
    },
    audit: (flags) => ({ action: "workspace.set_plan", targetType: "workspace", targetId: flags.workspace, workspaceId: flags.workspace, changes: [{ field: "plan", value: flags.plan }] }),
  },
  "key:create": {
    summary: "Creates an API key for a user; the key is shown this once.",
    service: "identity",
    flags: {
      email: { placeholder: "E", required: true },
      name: { placeholder: "N", required: true },
    },
    async run(flags, { identity }) {
      const res = await identity.createApiKey({ email: flags.email, name: flags.name }, callOptions);
      const { id, name, prefix, createdAt } = apiKeyJson(present(res.apiKey, "an API key"));
      return { id, name, key: res.key, prefix, createdAt };
    },
    audit: (flags, key) => ({ action: "api_key.create", targetType: "api_key", targetId: key.id, personEmail: flags.email, changes: [{ field: "name", value: key.name }] }),
  },
  "key:list": {
    summary: "Lists a user's API keys (never the keys themselves).",
    service: "identity",
    flags: { email: { placeholder: "E", required: true } },
    async run(flags, { identity }) {
      const res = await identity.listApiKeys({ email: flags.email }, callOptions);
      return { keys: res.apiKeys.map(apiKeyJson) };
    },
  },
  "key:delete": {
    summary: "Deletes an API key; it stops working at once.",
    service: "identity",
    flags: { id: { placeholder: "K", required: true } },
    async run(flags, { identity }) {
      await identity.deleteApiKey({ id: flags.id }, callOptions);
      return { deleted: true, id: flags.id };
    },
    // Whose key it was is gone with it: recorded without a workspace (the operator's own record, on stdout).
    audit: (flags) => ({ action: "api_key.delete", targetType: "api_key", targetId: flags.id }),
  },
  "form:publish": {
    summary: "Publishes a form (also reopens a closed one).",
    service: "forms",
    flags: { id: { placeholder: "F", required: true } },
    async run(flags, { forms }) {
      const res = await forms.setFormStatus({ id: flags.id, status: FormStatus.PUBLISHED }, callOptions);
      return { form: formJson(present(res.form, "a form")) };
    },
    audit: formEvent("form.publish"),
  },
  "form:close": {
    summary: "Closes a form: it stays visible but takes no responses.",
    service: "forms",
    flags: { id: { placeholder: "F", required: true } },
    async run(flags, { forms }) {
      const res = await forms.setFormStatus({ id: flags.id, status: FormStatus.CLOSED }, callOptions);
      return { form: formJson(present(res.form, "a form")) };
    },
    audit: formEvent("form.close"),
  },
  "form:restore": {
    summary: "Takes a form out of the Trash, in the status it had.",
    service: "forms",
    flags: { id: { placeholder: "F", required: true } },
    async run(flags, { forms }) {
      const res = await forms.restoreForm({ id: flags.id }, callOptions);
      return { form: formJson(present(res.form, "a form")) };
    },
    audit: formEvent("form.restore"),
  },
  prune: {
    summary:
      "Removes, from every service, the rows it keeps no longer that ended before --older-than (expired sessions and links, sent mail, finished deliveries ...); with --dry-run only counts them. Prints the rows by table.",
    flags: {
      "older-than": { placeholder: "T", required: true, timestamp: true },
      "dry-run": { placeholder: "", switch: true },
    },
    async run(flags, { maintenance }) {
      const request = { olderThanMs: BigInt(parseTimestamp(flags["older-than"])!.getTime()), dryRun: flags["dry-run"] === "true" };
      // Every service prunes even when another cannot be reached: running it again later removes only what is left.
      const answers = await Promise.allSettled(serviceNames.map((service) => maintenance(service).prune(request, pruneCallOptions)));
      const removed: Record<string, number> = {};
      for (const [i, answer] of answers.entries()) {
        if (answer.status === "rejected") throw new ServiceFailure(serviceNames[i], answer.reason);
        for (const [what, rows] of Object.entries(answer.value.removed)) removed[what] = Number(rows);
      }
      return removed;
    },
  },
  version: {
    summary: "Prints the release this checkout (or image) is: the root package.json's version.",
    flags: {},
    async run() {
      return { version };
    },
  },
  backup: {
    summary:
      "Writes the whole database (every service's schema, one consistent snapshot) and DATA_DIR's files into one file, while the system runs; with S3_BUCKET the bucket is not in it. Prints {file, bytes}.",
    flags: { out: { placeholder: "FILE", required: true } },
    async run(flags, _clients, _input, { config, env }) {
      // Loaded on use: the other commands need neither pg nor the launcher's embedded Postgres.
      const { backup } = await import("./backup.ts");
      return backup(config, flags.out, env);
    },
  },
  restore: {
    summary:
      "With the system stopped, replaces the database (the embedded one under DATA_DIR, or DATABASE_URL's services' schemas) and DATA_DIR's files with a backup's. Needs --yes.",
    flags: {
      from: { placeholder: "FILE", required: true },
      yes: { placeholder: "", switch: true },
    },
    async run(flags, _clients, _input, { config, env }) {
      if (flags.yes !== "true") {
        throw new UsageError(`restore replaces everything the system holds (${config.databaseUrl ? "the services' schemas in DATABASE_URL" : `the embedded database under ${config.dataDir}`} and its files) with the backup's: add --yes to go ahead`);
      }
      const { restore } = await import("./backup.ts");
      return restore(config, flags.from, env);
    },
  },
  help: {
    summary: "Lists the commands.",
    flags: {},
    async run() {
      return {
        usage: "npm run -s cli -- <command> [--flag value]...",
        commands: Object.fromEntries(Object.entries(commands).map(([name, spec]) => [name, { usage: usage(name), summary: spec.summary }])),
      };
    },
  },
};

/** `user:create --email E [--name N] [--plan free|pro]` */
export function usage(name: string): string {
  const spec = commands[name];
  const flags = Object.entries(spec.flags).map(([flag, f]) => {
    const written = f.switch ? `--${flag}` : `--${flag} ${f.placeholder}`;
    return f.required ? written : `[${written}]`;
  });
  return [name, ...flags].join(" ");
}

function isSwitch(command: string, flag: string): boolean {
  return Object.hasOwn(commands, command) && Object.hasOwn(commands[command].flags, flag) && commands[command].flags[flag].switch === true;
}

/** Splits `<command> --flag value --other=value --switch` into the command and its flags. */
export function parseArgs(argv: readonly string[]): { command: string; flags: Flags } {
  const [command, ...rest] = argv;
  if (command === undefined) throw new UsageError("no command given; `npm run -s cli -- help` lists them");
  if (command === "--help" || command === "-h") return { command: "help", flags: {} };
  if (command.startsWith("-")) throw new UsageError(`expected a command before ${command}; \`npm run -s cli -- help\` lists them`);
  const flags: Flags = {};
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (!arg.startsWith("--") || arg === "--") throw new UsageError(`unexpected argument "${arg}": flags are written --name value`);
    const eq = arg.indexOf("=");
    let name: string;
    let value: string | undefined;
    if (eq > 2) {
      name = arg.slice(2, eq);
      value = arg.slice(eq + 1);
    } else if (isSwitch(command, arg.slice(2))) {
      name = arg.slice(2);
      value = "true";
    } else {
      name = arg.slice(2);
      value = rest[i + 1];
      if (value === undefined || value.startsWith("--")) throw new UsageError(`--${name} needs a value`);
      i++;
    }
    if (Object.hasOwn(flags, name)) throw new UsageError(`--${name} is given twice`);
    flags[name] = value;
  }
  return { command, flags };
}

/** Checks the flags against the command's spec: known, required, non-empty, allowed values. */
export function validate(command: string, flags: Flags): CommandSpec {
  if (!Object.hasOwn(commands, command)) throw new UsageError(`unknown command "${command}"; \`npm run -s cli -- help\` lists them`);
  const spec = commands[command];
  for (const name of Object.keys(flags)) {
    if (!Object.hasOwn(spec.flags, name)) {
      const known = Object.keys(spec.flags).map((f) => `--${f}`).join(", ") || "none";
      throw new UsageError(`unknown flag --${name} for ${command} (its flags: ${known})`);
    }
  }
  for (const [name, f] of Object.entries(spec.flags)) {
    const value = flags[name];
    if (value === undefined) {
      if (f.required) throw new UsageError(`${command} needs --${name}; usage: ${usage(command)}`);
      continue;
    }
    if (f.switch && value !== "true") throw new UsageError(`--${name} takes no value`);
    if (value.trim() === "") throw new UsageError(`--${name} must not be empty`);
    if (f.values && !f.values.includes(value)) throw new UsageError(`--${name} must be ${f.values.join(" or ")}, not "${value}"`);
    if (f.timestamp && !parseTimestamp(value)) {
      throw new UsageError(`--${name} must be an ISO 8601 timestamp: a date (midnight UTC) or a date and time with its offset, as 2026-11-01 or 2026-11-01T09:30:00Z; not "${value}"`);
    }
  }
  return spec;
}
