// A setting switched off and on, measured in alternating rounds on a fresh system each, so a machine that
// speeds up or slows down moves both alike. Used by the benches of the caches (API_KEY_CACHE, MEMBERSHIP_CACHE, OPEN_FORM_CACHE, WEBHOOK_CACHE).
import { mean, ratio } from "./common.ts";

export async function switchAB(rounds: number, measure: (value: "on" | "off") => Promise<number>) {
  const on: number[] = [];
  const off: number[] = [];
  for (let round = 0; round < rounds; round++) {
    off.push(await measure("off"));
    on.push(await measure("on"));
  }
  return { rounds, off, on, ratioOnToOff: ratio(mean(on), mean(off)) };
}

/** `--flag N` from the command line, else `fallback`. */
export function numberArg(flag: string, fallback: number): number {
  const i = process.argv.indexOf(flag);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

export const rounded = (xs: number[]) => xs.map((x) => Math.round(x)).join(", ");
