import { test } from "node:test";
import assert from "node:assert/strict";
import { contrastProblem, contrastRatio, defaultTheme, formatRatio, minContrast, relativeLuminance, schemePalettes, themeContrast } from "./theme.ts";

test("contrast ratios are WCAG's: 21:1 for black on white, 1:1 for a colour on itself, symmetric", () => {
  assert.equal(relativeLuminance("#000000"), 0);
  assert.equal(relativeLuminance("#FFFFFF"), 1);
  assert.equal(contrastRatio("#000000", "#ffffff"), 21);
  assert.equal(contrastRatio("#777777", "#777777"), 1);
  assert.equal(contrastRatio("#0969da", "#ffffff"), contrastRatio("#ffffff", "#0969da"));
  // Known values (WebAIM's checker): #767676 on white is the lightest grey that passes AA, #777777 fails.
  assert.equal(formatRatio(contrastRatio("#767676", "#ffffff")), "4.54:1");
  assert.equal(formatRatio(contrastRatio("#777777", "#ffffff")), "4.47:1");
  assert.throws(() => relativeLuminance("blue"), /not a #rrggbb colour/);
});

test("a ratio is cut, never rounded up, so a failing one never reads 4.50:1", () => {
  assert.equal(formatRatio(4.4999), "4.49:1");
  assert.equal(formatRatio(21), "21.00:1");
});

test("a theme is held to white on its accent and the page's text on its background", () => {
  const [accent, background] = themeContrast({ accentColor: "#0969da", backgroundColor: "#f6f7f9" });
  assert.equal(accent.field, "accentColor");
  assert.equal(accent.passes, true);
  assert.equal(background.field, "backgroundColor");
  assert.equal(background.passes, true);
  const weak = themeContrast({ accentColor: "#ffcc00", backgroundColor: "#333333" });
  assert.deepEqual(weak.map((c) => c.passes), [false, false]);
  assert.match(contrastProblem(weak[0]), /^white text on the accent colour has a contrast of 1\.\d\d:1; at least 4\.5:1 is needed \(WCAG AA\)$/);
  assert.equal(themeContrast({ accentColor: "nope", backgroundColor: "#ffffff" })[0].passes, false, "a colour that is no colour never passes");
});

test("a dark theme holds the dark palette's text to its background; an automatic one, the light text to it", () => {
  const dark = themeContrast({ accentColor: "#1f6feb", backgroundColor: schemePalettes.dark.background, colorScheme: "dark" });
  assert.deepEqual(dark.map((c) => c.passes), [true, true]);
  assert.ok(dark[1].ratio > 15, `light text on #0d1117: ${dark[1].ratio}`);
  const lightBackgroundInDark = themeContrast({ ...defaultTheme, colorScheme: "dark" })[1];
  assert.equal(lightBackgroundInDark.passes, false, "a light background cannot carry a dark page's light text");
  assert.match(contrastProblem(lightBackgroundInDark), /^the text on the background colour has a contrast of 1\.\d\d:1/);
  assert.deepEqual(themeContrast({ ...defaultTheme, colorScheme: "auto" }).map((c) => c.passes), [true, true]);
  assert.equal(themeContrast({ ...defaultTheme, backgroundColor: "#0d1117", colorScheme: "auto" })[1].passes, false, "auto uses the background in light");
});

test("every fixed pair of both palettes is WCAG AA: text, muted text, errors and links on the card and fields; the text on the background", () => {
  for (const [name, p] of Object.entries(schemePalettes)) {
    const link = p.link ?? defaultTheme.accentColor;
    const pairs: [string, string, string, number][] = [
      ["text on the card", p.text, p.card, minContrast],
      ["text on the background", p.text, p.background, minContrast],
      ["text in a field", p.text, p.fieldBackground, minContrast],
      ["muted text on the card", p.muted, p.card, minContrast],
      ["an error on the card", p.danger, p.card, minContrast],
      ["an error on its summary", p.danger, p.dangerSoft, minContrast],
      ["text on the saved-progress note", p.text, p.info, minContrast],
      ["a link on the card", link, p.card, minContrast],
      // Non-text contrast (WCAG 1.4.11): a field's border against the card.
      ["a field's border on the card", p.fieldLine, p.card, 3],
    ];
    for (const [pair, fg, bg, least] of pairs) {
      const ratio = contrastRatio(fg, bg);
      assert.ok(ratio >= least, `${name}: ${pair} (${fg} on ${bg}) has ${formatRatio(ratio)}, under ${least}:1`);
    }
  }
});
