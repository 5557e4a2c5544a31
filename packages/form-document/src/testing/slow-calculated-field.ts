// For tests of the cost bounds on calculated fields: an expression that passes the save check but runs
// long over a long list answer, so that only the runtime deadline can stop it.

/** 500 options: ticked all, the longest list answer a form can have. */
export const manyOptions = Array.from({ length: 500 }, (_, i) => ({ id: `o${i}`, text: `Option ${i}` }));

// A filter keeps nothing, so the evaluation's memory stays small (a map would hold 250,000 strings and
// meet the worker's heap limit before its deadline).
const pair = `size(tags.map(x, tags.filter(y, ${Array(8).fill("x + y").join(" + ")} == "")))`;
/**
 * Over `tags` with every one of `manyOptions` ticked: as many comprehensions as the save check allows, two
 * inside one another, four times: about 2 s on a quick 2-core machine, 5 times the longest deadline the
 * tests cut it at, so that a faster machine still overruns them. Run to its end it gives 1.
 */
export const slowExpression = `${[pair, pair, pair, pair].join(" + ")} >= 0 ? 1.0 : 0.0`;
