import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { commands, parseArgs, usage, validate, UsageError } from "./commands.ts";

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
  ] as const) {
    test(`rejects ${command} ${JSON.stringify(flags)}`, () => {
      assert.throws(() => validate(command, flags), (err: Error) => err instanceof UsageError && message.test(err.message));
    });
  }
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
        "help",
      ],
    );
  });

  test("every command that calls a service names it", () => {
    for (const [name, spec] of Object.entries(commands)) {
      if (name !== "help") assert.ok(spec.service === "identity" || spec.service === "forms", name);
    }
  });
});
