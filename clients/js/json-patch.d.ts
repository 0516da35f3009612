// Types of json-patch.js: RFC 6901 pointers and RFC 6902 patches on immutable JSON values.

export type JSON = null | boolean | number | string | JSON[] | { [key: string]: JSON };

export type PatchOperation =
  | { op: "add" | "replace" | "test"; path: string; value: JSON }
  | { op: "remove"; path: string }
  | { op: "move" | "copy"; path: string; from: string };

/** A patch that does not apply; `index` is the failing operation's position. */
export declare class PatchError extends Error {
  constructor(message: string, index?: number);
  index?: number;
}

/** The tokens of a JSON Pointer (throws on a malformed one). */
export declare function parsePointer(pointer: string): string[];
export declare function formatPointer(tokens: readonly string[]): string;
/** The value at `pointer`, or `undefined` when nothing is there. */
export declare function getPointer(doc: JSON, pointer: string | readonly string[]): JSON | undefined;
export declare function jsonEqual(a: JSON, b: JSON): boolean;
/** A new document with `ops` applied; `doc` is never modified. Throws `PatchError`. */
export declare function applyPatch<T extends JSON = JSON>(doc: T, ops: readonly PatchOperation[]): JSON;
