import { DocumentError } from "./errors.ts";
import { describeProblems } from "./answers.ts";
import { logicProblems } from "./logic-check.ts";
import { randomId, randomKey } from "./ids.ts";
import { isChoiceBlock, isInputBlock, keyPattern } from "./block-types.ts";
import type { Block, FormDocument } from "./schema.ts";

export interface NormalizedDocument {
  document: FormDocument;
  /** Every key ever assigned on the form, by block id: the old map and the keys assigned now. */
  blockKeys: Record<string, string>;
}

/**
 * Gives every block and option without an id a new one and every input block its key.
 *
 * `blockKeys` holds all keys ever assigned on this form, by block id. A block whose id is in it gets
 * that key whatever the client sent, so keys survive renames and a removed block coming back. Any other
 * block keeps a key the client sent when it is valid and no other block id of this form (past or
 * present) owns it; otherwise it gets a generated one. Two new blocks claiming the same key, duplicate
 * block ids and duplicate option ids within a block are errors ({@link DocumentError}), and so are logic
 * rules that do not fit the document (logic-check.ts), each named in the error's `problems`.
 *
 * The input is not modified. Paths in error messages start at `root`.
 */
export function normalizeDocument(
  doc: FormDocument,
  blockKeys: Record<string, string> = {},
  root = "document",
): NormalizedDocument {
  const blocks: Block[] = doc.blocks.map((block) => structuredClone(block));

  // Ids: client ids first (duplicates are errors), then fresh ones that collide with nothing.
  const usedIds = new Set<string>(Object.keys(blockKeys));
  const seenIds = new Map<string, number>();
  blocks.forEach((block, i) => {
    if (block.id === undefined) return;
    const first = seenIds.get(block.id);
    if (first !== undefined) {
      throw new DocumentError(`${root}.blocks[${i}].id: duplicate block id "${block.id}" (also ${root}.blocks[${first}])`);
    }
    seenIds.set(block.id, i);
    usedIds.add(block.id);
  });
  const freshId = (taken: Set<string>) => {
    let id = randomId();
    while (taken.has(id)) id = randomId();
    taken.add(id);
    return id;
  };
  for (const [i, block] of blocks.entries()) {
    if (block.id === undefined) block.id = freshId(usedIds);
    if (isChoiceBlock(block)) {
      const optionIds = new Map<string, number>();
      block.options.forEach((option, j) => {
        if (option.id === undefined) return;
        const first = optionIds.get(option.id);
        if (first !== undefined) {
          throw new DocumentError(
            `${root}.blocks[${i}].options[${j}].id: duplicate option id "${option.id}" (also options[${first}])`,
          );
        }
        optionIds.set(option.id, j);
      });
      const taken = new Set(optionIds.keys());
      block.options = block.options.map((option) => (option.id === undefined ? { ...option, id: freshId(taken) } : option));
    }
    if (block.type === "MATRIX") {
      // Rows and columns share one set of ids, so a row id never reads as a column's.
      const taken = new Set<string>();
      for (const list of ["rows", "columns"] as const) {
        block[list].forEach((line, j) => {
          if (line.id === undefined) return;
          if (taken.has(line.id)) throw new DocumentError(`${root}.blocks[${i}].${list}[${j}].id: duplicate id "${line.id}" (rows and columns each need their own)`);
          taken.add(line.id);
        });
      }
      block.rows = block.rows.map((row) => (row.id === undefined ? { ...row, id: freshId(taken) } : row));
      block.columns = block.columns.map((column) => (column.id === undefined ? { ...column, id: freshId(taken) } : column));
    }
  }

  // Keys. Owners: every key ever assigned on the form, by block id.
  const owner = new Map<string, string>();
  for (const [blockId, key] of Object.entries(blockKeys)) owner.set(key, blockId);
  const keys = new Map<number, string>();
  const claimedBy = new Map<string, number>();
  blocks.forEach((block, i) => {
    if (!isInputBlock(block)) return;
    const assigned = blockKeys[block.id!];
    if (assigned !== undefined) {
      keys.set(i, assigned);
      return;
    }
    const wanted = block.key;
    if (wanted === undefined || !keyPattern.test(wanted)) return;
    const ownerId = owner.get(wanted);
    if (ownerId !== undefined && ownerId !== block.id) return; // another block's key: generate one
    const first = claimedBy.get(wanted);
    if (first !== undefined) {
      throw new DocumentError(`${root}.blocks[${i}].key: duplicate key "${wanted}" (also ${root}.blocks[${first}])`);
    }
    claimedBy.set(wanted, i);
    keys.set(i, wanted);
  });
  const newBlockKeys: Record<string, string> = { ...blockKeys };
  const { blocks: _blocks, ...rest } = doc;
  const document: FormDocument = { ...structuredClone(rest), blocks: [] };
  document.blocks = blocks.map((block, i) => {
    if (!isInputBlock(block)) return block;
    let key = keys.get(i);
    if (key === undefined) {
      do key = randomKey();
      while (owner.has(key) || claimedBy.has(key));
      claimedBy.set(key, i);
    }
    newBlockKeys[block.id!] = key;
    const { id, key: _sent, type, ...fields } = block;
    return { id, key, type, ...fields } as Block;
  });
  // The rules name blocks by id: checked once every block has its id.
  const problems = logicProblems(document).map((p) => ({ path: `${root}.${p.path}`, message: p.message }));
  if (problems.length > 0) {
    throw new DocumentError(describeProblems(problems.map((p) => ({ message: p.message, line: `${p.path}: ${p.message}` })), 3), problems);
  }
  return { document, blockKeys: newBlockKeys };
}
