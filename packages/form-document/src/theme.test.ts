import { test } from "node:test";
import assert from "node:assert/strict";
import { contrastProblem, contrastRatio, formatRatio, relativeLuminance, themeContrast } from "./theme.ts";

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
