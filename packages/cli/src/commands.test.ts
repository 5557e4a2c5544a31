import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { commands, parseArgs, parseTimestamp, usage, validate, UsageError } from "./commands.ts";

describe("parseArgs", () => {
  test("reads the command and --flag value pairs", () => {
    assert.deepEqual(parseArgs(["user:create", "--email", "a@example.com", "--name", "Ann Lee"]), {
      command: "user:create",
      flags: { email: "a@example.com", name: "Ann Lee" },
    });
  });

  test("accepts --flag=value, with = inside the value", () => {
    assert.deepEqual(parseArgs(["key:create", "--email=a@example.com", "--name=a=b"]), {
      command: "key:create",
      flags: { email: "a@example.com", name: "a=b" },
    });
  });

  test("a switch takes no value: the next argument is the next flag", () => {
    assert.deepEqual(parseArgs(["user:create", "--password-stdin", "--email", "a@example.com"]), {
      command: "user:create",
      flags: { "password-stdin": "true", email: "a@example.com" },
    });
    assert.deepEqual(parseArgs(["user:set-password", "--email", "a@example.com", "--password-stdin"]).flags, { email: "a@example.com", "password-stdin": "true" });
    assert.deepEqual(parseArgs(["prune", "--dry-run", "--older-than", "2026-11-01"]).flags, { "dry-run": "true", "older-than": "2026-11-01" });
  });

  test("--help and -h mean help", () => {
    assert.deepEqual(parseArgs(["--help"]), { command: "help", flags: {} });
    assert.deepEqual(parseArgs(["-h"]), { command: "help", flags: {} });
  });

  for (const [argv, message] of [
    [[], /no command given/],
    [["--email", "a"], /expected a command before --email/],
    [["key:list", "a@example.com"], /unexpected argument "a@example.com"/],
    [["key:list", "--email"], /--email needs a value/],
    [["key:list", "--email", "--name", "x"], /--email needs a value/],
    [["key:list", "--email", "a", "--email", "b"], /--email is given twice/],
    [["key:list", "--"], /unexpected argument "--"/],
  ] as const) {
    test(`rejects ${JSON.stringify(argv)}`, () => {
      assert.throws(() => parseArgs(argv), (err: Error) => err instanceof UsageError && message.test(err.message));
    });
  }
});

describe("validate", () => {
  test("returns the command's spec when the flags fit", () => {
    assert.equal(validate("user:create", { email: "a@example.com", plan: "pro" }), commands["user:create"]);
    assert.equal(validate("user:create", { email: "a@example.com" }), commands["user:create"]);
  });

  for (const [command, flags, message] of [
    ["nope", {}, /unknown command "nope"/],
    ["toString", {}, /unknown command "toString"/],
    ["user:create", {}, /user:create needs --email; usage: user:create --email E \[--name N\] \[--plan free\|pro\] \[--password-stdin\]/],
    ["user:create", { email: "a", plan: "gold" }, /--plan must be free or pro, not "gold"/],
    ["user:create", { email: "a", owner: "b" }, /unknown flag --owner for user:create \(its flags: --email, --name, --plan, --password-stdin\)/],
    ["user:set-password", { email: "a" }, /user:set-password needs --password-stdin; usage: user:set-password --email E --password-stdin/],
    ["user:set-password", { email: "a", "password-stdin": "secret" }, /--password-stdin takes no value/],
    ["user:create", { email: " " }, /--email must not be empty/],
    ["workspace:set-plan", { workspace: "w" }, /needs --plan/],
    ["help", { x: "1" }, /unknown flag --x for help \(its flags: none\)/],
    ["prune", {}, /prune needs --older-than; usage: prune --older-than T \[--dry-run\]/],
    ["prune", { "older-than": "yesterday" }, /--older-than must be an ISO 8601 timestamp: a date \(midnight UTC\) or a date and time with its offset, as 2026-11-01 or 2026-11-01T09:30:00Z; not "yesterday"/],
    ["prune", { "older-than": "2026-11-01T09:30:00" }, /--older-than must be an ISO 8601 timestamp/],
    ["prune", { "older-than": "2026-11-01", "dry-run": "yes" }, /--dry-run takes no value/],
  ] as const) {
    test(`rejects ${command} ${JSON.stringify(flags)}`, () => {
      assert.throws(() => validate(command, flags), (err: Error) => err instanceof UsageError && message.test(err.message));
    });
  }
});

describe("parseTimestamp", () => {
  test("reads a date as its midnight UTC, and a date and time with its offset", () => {
    for (const [written, meant] of [
      ["2026-11-01", "2026-11-01T00:00:00.000Z"],
      ["2026-11-01T09:30Z", "2026-11-01T09:30:00.000Z"],
      ["2026-11-01T09:30:15Z", "2026-11-01T09:30:15.000Z"],
      ["2026-11-01T09:30:15.250Z", "2026-11-01T09:30:15.250Z"],
      ["2026-11-01T09:30:00+02:00", "2026-11-01T07:30:00.000Z"],
      ["2026-11-01T09:30:00-0530", "2026-11-01T15:00:00.000Z"],
      ["2028-02-29T23:59:59Z", "2028-02-29T23:59:59.000Z"],
    ]) {
      assert.equal(parseTimestamp(written)?.toISOString(), meant, written);
    }
  });

  test("refuses what is not one, a time without its offset, and dates or times that do not exist", () => {
    for (const written of [
      "",
      "now",
      "1764547200000",
      "2026-11-01 09:30:00Z",
      "2026-11-01T09:30:00",
      "2026-1-1",
      "01/11/2026",
      "2026-02-30",
      "2027-02-29",
      "2026-13-01",
      "2026-11-01T24:00:00Z",
      "2026-11-01T09:60:00Z",
      "2026-11-01T09:30:60Z",
      "2026-11-01T09:30:00+24:00",
      " 2026-11-01",
    ]) {
      assert.equal(parseTimestamp(written), undefined, written);
    }
  });
});

describe("the command table", () => {
  test("has exactly the commands of DESIGN.md and the README, with their usage", () => {
    assert.deepEqual(
      Object.keys(commands).map(usage),
      [
        "user:create --email E [--name N] [--plan free|pro] [--password-stdin]",
        "user:set-password --email E --password-stdin",
        "workspace:create --owner E --name N [--plan free|pro]",
        "user:invite --workspace W --email E [--role admin|member]",
        "workspace:add-member --workspace W --email E",
        "workspace:set-plan --workspace W --plan free|pro",
        "key:create --email E --name N",
        "key:list --email E",
        "key:delete --id K",
        "form:publish --id F",
        "form:close --id F",
        "form:restore --id F",
        "prune --older-than T [--dry-run]",
        "version",
        "backup --out FILE",
        "restore --from FILE [--yes]",
        "help",
      ],
    );
  });

  test("every command that calls one service names it; prune calls every one with a database; version, backup and restore call none", () => {
    for (const [name, spec] of Object.entries(commands)) {
      if (["help", "prune", "version", "backup", "restore"].includes(name)) assert.equal(spec.service, undefined, name);
      else assert.ok(spec.service === "identity" || spec.service === "forms", name);
    }
  });
});
