// `npm run -s cli -- <command> [--flag value]...`: exactly one JSON object on stdout and exit 0,
// or `{"error": "..."}` on stderr and exit 1.
import { text } from "node:stream/consumers";
import { Code, ConnectError } from "@connectrpc/connect";
import { loadConfig, type Config, type ServiceName } from "@formsvc/platform/config.ts";
import { createServiceClient } from "@formsvc/platform/rpc.ts";
import { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { MaintenanceService } from "@formsvc/proto/maintenance/v1/maintenance_pb.js";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { newId } from "@formsvc/platform/ids.ts";
import { parseArgs, validate, ServiceFailure, UsageError, type Clients, type Input, type SystemAuditEvent } from "./commands.ts";

export interface CliResult {
  code: 0 | 1;
  stdout?: string;
  stderr?: string;
}

/** Clients made on first use, at the configured addresses (the same as `npm start`'s). */
function lazyClients(config: Config): Clients {
  let identity: Clients["identity"] | undefined;
  let forms: Clients["forms"] | undefined;
  const maintenance = new Map<ServiceName, ReturnType<Clients["maintenance"]>>();
  return {
    get identity() {
      return (identity ??= createServiceClient(IdentityService, config.services.identity));
    },
    get forms() {
      return (forms ??= createServiceClient(FormsService, config.services.forms));
    },
    maintenance(service) {
      let client = maintenance.get(service);
      if (!client) maintenance.set(service, (client = createServiceClient(MaintenanceService, config.services[service])));
      return client;
    },
  };
}

const unreachable = new Set(["ECONNREFUSED", "ENOTFOUND", "EHOSTUNREACH", "ECONNRESET", "EAI_AGAIN"]);

/** Where the CLI looked, and how to point it elsewhere: `npm start` and the CLI read the same variables. */
function whereAsked(address: string, service: ServiceName): string {
  return `asked the ${service} service at ${address}; if your system runs elsewhere, give the CLI the environment npm start has (${service.toUpperCase()}_URL)`;
}

/**
 * The error message of a failed call. A service that cannot be reached, and a person or thing it does not
 * know, are said with the address asked: a CLI run without `npm start`'s environment talks to the defaults.
 */
export function errorMessage(err: unknown, address?: string, service?: ServiceName): string {
  if (err instanceof UsageError) return err.message;
  const connectErr = ConnectError.from(err);
  const cause = (connectErr.cause as { code?: string } | undefined)?.code;
  const text = connectErr.rawMessage;
  if (address && connectErr.code === Code.Unavailable && ((cause && unreachable.has(cause)) || /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH/.test(text))) {
    const elsewhere = service ? `, or set ${service.toUpperCase()}_URL to where they run` : "";
    return `the services are not running at ${address} (${text}); start them with npm start${elsewhere}`;
  }
  // Running but not able to answer now (its database is down, say): worth trying again, not a mistake.
  if (connectErr.code === Code.Unavailable) return `the service at ${address ?? "its address"} is unavailable right now (${text}); try again shortly`;
  if (address && connectErr.code === Code.DeadlineExceeded) return `no answer from ${address} in time (${text})`;
  if (address && service && connectErr.code === Code.NotFound) return `${text} (${whereAsked(address, service)})`;
  return text;
}

/**
 * Records a command's change in the audit log as the system's; what went wrong when it could not (the change
 * is made all the same, so the command still succeeds, with a warning on standard error).
 */
async function recordSystemEvent(identity: Clients["identity"], event: SystemAuditEvent, address: string): Promise<string | undefined> {
  try {
    await identity.recordAuditEvents(
      {
        events: [
          {
            id: newId(),
            occurredAt: timestampNow(),
            workspaceId: event.workspaceId ?? "",
            personal: event.personEmail !== undefined,
            subjectEmail: event.personEmail ?? "",
            actor: { type: "system" },
            action: event.action,
            targetType: event.targetType,
            targetId: event.targetId,
            changes: event.changes ?? [],
          },
        ],
      },
      { timeoutMs: 30_000 },
    );
    return undefined;
  } catch (err) {
    return `done, but not recorded in the audit log: ${errorMessage(err, address, "identity")}`;
  }
}

/** Standard input, read when a command asks for it. */
const processInput: Input = { stdin: () => text(process.stdin) };

export async function runCli(argv: readonly string[], options: { env?: NodeJS.ProcessEnv; clients?: Clients; input?: Input } = {}): Promise<CliResult> {
  let config: Config | undefined;
  let address: string | undefined;
  let service: ServiceName | undefined;
  try {
    const { command, flags } = parseArgs(argv);
    const spec = validate(command, flags);
    const env = options.env ?? process.env;
    config = loadConfig(env);
    if (spec.service) {
      service = spec.service;
      address = config.services[spec.service];
    }
    const clients = options.clients ?? lazyClients(config);
    const output = await spec.run(flags, clients, options.input ?? processInput, { config, env });
    const unrecorded = spec.audit ? await recordSystemEvent(clients.identity, spec.audit(flags, output), config.services.identity) : undefined;
    return { code: 0, stdout: JSON.stringify(output) + "\n", ...(unrecorded ? { stderr: JSON.stringify({ warning: unrecorded }) + "\n" } : {}) };
  } catch (err) {
    const error = err instanceof ServiceFailure ? errorMessage(err.cause, config?.services[err.service], err.service) : errorMessage(err, address, service);
    return { code: 1, stderr: JSON.stringify({ error }) + "\n" };
  }
}

if (import.meta.main) {
  const result = await runCli(process.argv.slice(2));
  const stream = result.stdout !== undefined ? process.stdout : process.stderr;
  // A warning beside a success (a change the audit log missed) goes to standard error.
  if (result.stdout !== undefined && result.stderr) process.stderr.write(result.stderr);
  // Exit once the line is written: an open HTTP/2 session must not keep the CLI waiting.
  stream.write(result.stdout ?? result.stderr ?? "", () => process.exit(result.code));
}
