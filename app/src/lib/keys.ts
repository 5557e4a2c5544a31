// Readable answer keys for new questions: `q_email` from "Your email", so calculated fields and the API
// read like the question. The server keeps a key it is sent unless another block of the form (past or
// present) owns it, and never changes a key once stored.
import type { BlockType, FormDocument } from "../types.ts";
import { cleanDocument, isInputType, type Draft, type EditableBlock } from "./document.ts";

/** Words that say nothing about the answer; left out unless nothing else is left. */
const fillerWords = new Set(["a", "an", "the", "your", "you", "what", "whats", "which", "is", "are", "do", "does", "please", "enter", "of", "s"]);
/** Longest key made here (the pattern allows 64): long enough for a few words. */
const maxKeyLength = 32;

/** `q_` and the question's words (ASCII, lowercase, joined by `_`), unique among `taken` with `_2`, `_3` ... */
export function readableKey(question: string, type: BlockType, taken: ReadonlySet<string>): string {
  const words = question
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  const meaningful = words.filter((w) => !fillerWords.has(w));
  let base = "q";
  for (const word of meaningful.length > 0 ? meaningful : words) {
    const next = `${base}_${word}`;
    if (next.length > maxKeyLength) {
      if (base === "q") base = next.slice(0, maxKeyLength);
      break;
    }
    base = next;
  }
  // A question in another script, or only punctuation: the block type names it.
  if (base === "q") base = `q_${type.toLowerCase()}`;
  let key = base;
  for (let n = 2; taken.has(key); n++) key = `${base}_${n}`;
  return key;
}

/** `blocks` with a readable key on each question that has none yet (a new one); stored keys stay. */
export function withReadableKeys(blocks: EditableBlock[]): EditableBlock[] {
  const taken = new Set(blocks.flatMap((b) => (b.key ? [b.key] : [])));
  return blocks.map((block) => {
    if (block.key || !isInputType(block.type)) return block;
    const key = readableKey(block.question ?? "", block.type, taken);
    taken.add(key);
    return { ...block, key };
  });
}

/** The document of `draft` as a save sends it (and the live preview shows it): new questions with their readable keys. */
export function documentToSave(draft: Draft): FormDocument {
  return cleanDocument({ ...draft, blocks: withReadableKeys(draft.blocks) });
}
