import { describe, expect, it } from "vitest";
import { readableKey, withReadableKeys } from "./keys.ts";

describe("readable keys", () => {
  it("are q_ and the question's words, without filler words, accents or punctuation", () => {
    const none = new Set<string>();
    expect(readableKey("Email", "EMAIL", none)).toBe("q_email");
    expect(readableKey("What is your email?", "EMAIL", none)).toBe("q_email");
    expect(readableKey("Your full name", "SHORT_TEXT", none)).toBe("q_full_name");
    expect(readableKey("Café à côté", "SHORT_TEXT", none)).toBe("q_cafe_cote");
    expect(readableKey("What is your...", "SHORT_TEXT", none)).toBe("q_what_is_your");
  });

  it("stay short, and fall back to the block type when no word is left", () => {
    const none = new Set<string>();
    expect(readableKey("How would you rate the venue, the food and the talks?", "RATING", none)).toBe("q_how_would_rate_venue_food_and");
    expect(readableKey("Pneumonoultramicroscopicsilicovolcanoconiosis", "SHORT_TEXT", none)).toBe("q_pneumonoultramicroscopicsilico");
    expect(readableKey("お名前", "SHORT_TEXT", none)).toBe("q_short_text");
    expect(readableKey("?", "RATING", none)).toBe("q_rating");
  });

  it("are unique in the form: a taken key gets _2, _3", () => {
    expect(readableKey("Email", "EMAIL", new Set(["q_email", "q_email_2"]))).toBe("q_email_3");
  });

  it("go on new questions only; stored keys and layout blocks stay as they are", () => {
    const blocks = withReadableKeys([
      { id: "a", key: "q_lkmx3ndw", type: "EMAIL", question: "Email" },
      { id: "b", type: "EMAIL", question: "Email" },
      { id: "c", type: "HEADING", text: "Email" },
      { id: "d", type: "EMAIL", question: "Email" },
      { id: "e", key: "q_email", type: "SHORT_TEXT", question: "Name" },
    ]);
    expect(blocks.map((b) => b.key)).toEqual(["q_lkmx3ndw", "q_email_2", undefined, "q_email_3", "q_email"]);
  });
});
