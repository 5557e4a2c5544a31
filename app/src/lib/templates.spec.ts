import { describe, expect, it } from "vitest";
import { formDocumentSchema, normalizeDocument } from "@formsvc/form-document";
import { formTemplates } from "./templates.ts";

describe("form templates", () => {
  it("are the four the New form dialog offers, with distinct ids", () => {
    expect(formTemplates.map((t) => t.id)).toEqual(["contact", "event-signup", "feedback", "job-application"]);
  });

  for (const template of formTemplates) {
    it(`${template.id}: a valid form document whose keys the server keeps`, () => {
      const parsed = formDocumentSchema.safeParse(template.document);
      expect(parsed.success, parsed.success ? "" : parsed.error.message).toBe(true);
      // Normalizing (what the server does when the form is created) keeps every given key.
      const { document } = normalizeDocument(parsed.data!);
      const keys = (blocks: typeof template.document.blocks) => blocks.flatMap((b) => ("key" in b && b.key ? [b.key] : []));
      expect(keys(document.blocks)).toEqual(keys(template.document.blocks));
    });
  }

  it("the job application asks for a file, the feedback form for a rating", () => {
    const types = (id: string) => formTemplates.find((t) => t.id === id)!.document.blocks.map((b) => b.type);
    expect(types("job-application")).toContain("FILE");
    expect(types("feedback")).toContain("RATING");
  });
});
