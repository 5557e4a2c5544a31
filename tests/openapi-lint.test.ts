// Integrators' tools accept the reference: Redocly (recommended rules) on the document written from
// buildOpenApiDocument, Spectral (spectral:oas) on the document as /developers serves it. No errors allowed.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import express from "express";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { referenceDocument } from "../gateway/src/developers/reference-document.ts";
import { developersRoutes } from "../gateway/src/developers/routes.ts";
import { openApiResponseValidator } from "./support/openapi-validator.ts";

const bin = (name: string) => join(repoRoot, "node_modules/.bin", name);
const publicUrl = "https://forms.example.org";
const document = referenceDocument(publicUrl);

/** A linter's report on stdout; both exit 1 when they find problems, which the assertions then name. */
function run(command: string, args: string[]): Promise<string> {
  // Not spawnSync: Spectral fetches the document from this very process.
  return new Promise((resolve, reject) => {
    execFile(bin(command), args, { cwd: repoRoot, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => {
      if (err && typeof err.code !== "number") reject(err);
      else resolve(stdout);
    });
  });
}

describe("the OpenAPI document in integrators' tools", () => {
  const dir = mkdtempSync(join(tmpdir(), "formsvc-openapi-"));
  const server = express().use("/developers", developersRoutes(document)).listen(0, "127.0.0.1");
  let servedUrl = "";
  before(async () => {
    await new Promise((resolve) => server.once("listening", resolve));
    servedUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/developers/openapi.json`;
  });
  after(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("passes Redocly's recommended rules with no errors", async (t) => {
    const file = join(dir, "openapi.json");
    writeFileSync(file, JSON.stringify(document, null, 2));
    const report: { totals: { errors: number; warnings: number }; problems: { ruleId: string; severity: string; message: string }[] } = JSON.parse(
      await run("redocly", ["lint", file, "--extends=recommended", "--format=json"]),
    );
    t.diagnostic(`redocly: ${report.totals.errors} errors, ${report.totals.warnings} warnings`);
    const errors = report.problems.filter((p) => p.severity === "error").map((p) => `${p.ruleId}: ${p.message}`);
    assert.deepEqual(errors, []);
    assert.equal(report.totals.errors, 0);
  });

  it("passes Spectral's OpenAPI rules on the served document with no errors", async (t) => {
    const results: { code: string; severity: number; message: string; path: string[] }[] = JSON.parse(
      (await run("spectral", ["lint", "-r", join(repoRoot, "tests/support/spectral-ruleset.yaml"), "-f", "json", "--quiet", servedUrl])) || "[]",
    );
    // Spectral's severities: 0 error, 1 warning, 2 information, 3 hint.
    const errors = results.filter((r) => r.severity === 0).map((r) => `${r.code}: ${r.message} at ${r.path.join(".")}`);
    t.diagnostic(`spectral: ${errors.length} errors, ${results.filter((r) => r.severity === 1).length} warnings`);
    assert.deepEqual(errors, []);
  });

  it("has a response validator that catches an answer the document does not allow", () => {
    const validator = openApiResponseValidator(document);
    const form = {
      id: "F1",
      workspaceId: "W1",
      name: "Sign-up",
      status: "draft",
      document: { blocks: [{ id: "b1", key: "q", type: "SHORT_TEXT", question: "Name" }] },
      settings: { language: "en", languages: [], branding: true, closedMessage: "Closed", redirectUrl: null, submitLabel: "Submit", showProgressBar: true, saveProgress: true, oneQuestionAtATime: false,
        closesAt: null, responseLimit: null, deleteResponsesAfterDays: null, honeypot: true, submissionsPerMinute: null, embedOrigins: null, requireSingleUseLink: false, proofOfWork: null, password: false, requireEmailVerification: false, captcha: null,
        notifications: { owner: false, members: [], receiptQuestionId: null },
        theme: { accentColor: "#0969da", backgroundColor: "#f6f7f9", font: "system", buttonStyle: "rounded", logo: null, colorScheme: "light" },
        thankYou: { title: "Thank you!", text: "Your response has been recorded.", buttonLabel: null, buttonUrl: null, redirectSeconds: null } },
      version: 0,
      responseCount: 0,
      createdAt: "2026-11-22T10:00:00.000Z",
      updatedAt: "2026-11-22T10:00:00.000Z",
    };
    assert.deepEqual(validator.check("GET", "/api/v1/forms/F1", 200, form, "application/json"), []);
    assert.equal(validator.check("GET", "/api/v1/forms/F1", 200, { ...form, status: "archived" }).length, 1);
    assert.equal(validator.check("GET", "/api/v1/forms/F1", 200, { ...form, document: { blocks: [{ type: "SLIDER" }] } }).length > 0, true);
    assert.deepEqual(validator.check("GET", "/api/v1/forms/F1", 404, { error: "form not found" }), []);
    assert.match(validator.check("GET", "/api/v1/users/me", 404, { error: "x" })[0] ?? "", /does not document status 404/);
    assert.deepEqual(validator.check("DELETE", "/api/v1/forms/F1", 204, undefined), []);
  });
});
