// The password-reset form's choice about API keys, rendered to HTML (react-dom/server).
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ApiKeysChoice } from "./Auth.tsx";

describe("choosing a new password", () => {
  it("offers to delete the API keys too, ticked by default, with why and what it does", () => {
    const html = renderToStaticMarkup(<ApiKeysChoice />);
    expect(html).toMatch(/<label class="check"><input type="checkbox"[^>]* name="deleteApiKeys" checked=""\/> Also delete my API keys<\/label>/);
    expect(html).toContain('id="reset-keys-hint"');
    expect(html).toContain("If you had not confirmed this email address, they are deleted either way.");
  });
});
