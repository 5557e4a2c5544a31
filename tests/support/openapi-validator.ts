// Checks answers against the OpenAPI document the system serves: Ajv (JSON Schema 2020-12) over the
// document itself, one compiled validator per operation and status.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

type OpenApiDocument = {
  paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, ResponseObject> }>>;
  webhooks?: Record<string, unknown>;
};
type ResponseObject = { $ref?: string; content?: Record<string, unknown> };

export interface ResponseValidator {
  /**
   * Problems of one answer to `method path` (a concrete path, `/api/v1/forms/F1?page=2`, or a template);
   * none when it matches the document. Answers to paths the document does not describe are not checked.
   */
  check(method: string, path: string, status: number, body: unknown, contentType?: string | null): string[];
  /** Problems of a webhook request's body against the document's `webhooks` section. */
  checkWebhook(name: string, body: unknown): string[];
  /** What was checked so far. */
  readonly counts: { responses: number; operations: number; violations: number };
}

const escapePointer = (part: string) => part.replaceAll("~", "~0").replaceAll("/", "~1");

export function openApiResponseValidator(openApiDocument: object, apiPrefix = "/api/v1"): ResponseValidator {
  // Read as OpenAPI 3.1, which buildOpenApiDocument produces and the lint tests hold it to.
  const document = openApiDocument as OpenApiDocument;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addFormat("binary", true);
  ajv.addSchema(document, "openapi.json");

  // Hosted-form paths live outside the API prefix; every other path is under it.
  const templates = Object.keys(document.paths)
    .map((template) => {
      const full = template.startsWith("/f/") ? template : `${apiPrefix}${template}`;
      const pattern = new RegExp(`^${full.replace(/\{\w+\}/g, "[^/]+")}$`);
      return { template, full, pattern, params: (template.match(/\{/g) ?? []).length };
    })
    // A literal segment wins over a parameter (`/users/me` before any `/users/{id}`).
    .sort((a, b) => a.params - b.params);

  const compiled = new Map<string, ValidateFunction>();
  const operations = new Set<string>();
  const counts = { responses: 0, operations: 0, violations: 0 };

  function validatorFor(template: string, method: string, status: string): ValidateFunction | string {
    const key = `${method} ${template} ${status}`;
    const known = compiled.get(key);
    if (known) return known;
    const operation = document.paths[template][method];
    let response = operation?.responses?.[status];
    if (!response) return `${method.toUpperCase()} ${template} does not document status ${status}`;
    let pointer = `#/paths/${escapePointer(template)}/${method}/responses/${status}`;
    if (response.$ref) {
      pointer = response.$ref;
      response = pointer.slice(2).split("/").reduce<any>((node, part) => node?.[part], document) as ResponseObject;
    }
    const schema = response.content?.["application/json"] ? { $ref: `openapi.json${pointer}/content/application~1json/schema` } : { not: {} };
    const validate = ajv.compile(schema);
    compiled.set(key, validate);
    return validate;
  }

  return {
    counts,
    check(method, path, status, body, contentType) {
      const lower = method.toLowerCase();
      const bare = path.split("?")[0];
      const found = templates.find((t) => t.pattern.test(bare) || t.template === bare || t.full === bare);
      if (!found || !document.paths[found.template][lower]) return [];
      counts.responses++;
      operations.add(`${lower} ${found.template}`);
      counts.operations = operations.size;
      const problems: string[] = [];
      const validate = validatorFor(found.template, lower, String(status));
      if (typeof validate === "string") problems.push(validate);
      else if (status === 204 || body === undefined || body === "") {
        if (status !== 204 && !validate(undefined)) problems.push(`${lower.toUpperCase()} ${found.template} ${status}: the document promises a body`);
      } else {
        if (contentType !== undefined && !/^application\/json\b/.test(contentType ?? "")) {
          problems.push(`${lower.toUpperCase()} ${found.template} ${status}: content type ${contentType}, not JSON`);
        }
        if (!validate(body)) {
          problems.push(
            ...(validate.errors ?? []).map((e) => `${lower.toUpperCase()} ${found.template} ${status}: ${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`),
          );
        }
      }
      counts.violations += problems.length;
      return problems;
    },
    checkWebhook(name, body) {
      if (!document.webhooks?.[name]) return [`the document has no webhook ${name}`];
      const validate = ajv.compile({ $ref: `openapi.json#/webhooks/${escapePointer(name)}/post/requestBody/content/application~1json/schema` });
      counts.responses++;
      const problems = validate(body) ? [] : (validate.errors ?? []).map((e) => `webhook ${name}: ${e.instancePath || "/"} ${e.message}`);
      counts.violations += problems.length;
      return problems;
    },
  };
}

/** The document a running system serves, fetched once per address. */
const served = new Map<string, Promise<ResponseValidator>>();
/** The system at `baseUrl` stopped: the next one there may serve another document (bench-ab's older tree). */
export function forgetServedValidator(baseUrl: string): void {
  served.delete(baseUrl);
}

export function servedResponseValidator(baseUrl: string): Promise<ResponseValidator> {
  let validator = served.get(baseUrl);
  if (!validator) {
    validator = fetch(`${baseUrl}/developers/openapi.json`).then(async (res) => openApiResponseValidator(await res.json()));
    served.set(baseUrl, validator);
  }
  return validator;
}
