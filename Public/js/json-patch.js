// json-patch.js — JSON Pointer (RFC 6901) and JSON Patch (RFC 6902) for immutable JSON values.
// `applyPatch` never modifies its input: it copies only the containers on the paths it changes
// and shares every other subtree, so unchanged parts keep their identity. Used by
// islet-stream.js (which re-exports it); tested against the public conformance vectors.

/** An error raised by {@link applyPatch}: the patch is rejected and nothing changes. */
export class PatchError extends Error {
  constructor(message, index) {
    super(index === undefined ? message : `operation ${index}: ${message}`);
    this.name = "PatchError";
    this.index = index;
  }
}

/** Parses a JSON Pointer (RFC 6901) into its reference tokens. */
export function parsePointer(pointer) {
  if (pointer === "") return [];
  if (typeof pointer !== "string" || pointer[0] !== "/") throw new PatchError(`invalid pointer ${JSON.stringify(pointer)}`);
  return pointer.slice(1).split("/").map((token) => {
    if (/~(?![01])/.test(token)) throw new PatchError(`invalid escape in ${JSON.stringify(pointer)}`);
    return token.replace(/~1/g, "/").replace(/~0/g, "~");
  });
}

/** Formats reference tokens as a JSON Pointer. */
export function formatPointer(tokens) {
  return tokens.map((t) => "/" + String(t).replace(/~/g, "~0").replace(/\//g, "~1")).join("");
}

/** The value at `pointer` inside `doc`, or `undefined`. */
export function getPointer(doc, pointer) {
  let value = doc;
  for (const token of typeof pointer === "string" ? parsePointer(pointer) : pointer) {
    if (Array.isArray(value)) value = /^(0|[1-9][0-9]*)$/.test(token) ? value[Number(token)] : undefined;
    else if (isObject(value)) value = Object.hasOwn(value, token) ? value[token] : undefined;
    else return undefined;
  }
  return value;
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

function setMember(object, key, value) {
  // JSON.parse makes "__proto__" an ordinary member; assignment would change the prototype.
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}

/** Deep equality of JSON values (numbers compare by value, member order is irrelevant). */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

function arrayIndex(array, token, forAdd) {
  if (forAdd && token === "-") return array.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new PatchError(`bad array index ${JSON.stringify(token)}`);
  const index = Number(token);
  if (index > array.length || (!forAdd && index === array.length)) throw new PatchError(`index ${index} out of range`);
  return index;
}

// Returns a copy of `container` with `edit(childCopyTarget)` applied at `tokens`; containers
// off the path are shared, never copied.
function updateIn(container, tokens, edit) {
  if (tokens.length === 1) return edit(container, tokens[0]);
  const [head, ...rest] = tokens;
  if (Array.isArray(container)) {
    const index = arrayIndex(container, head, false);
    const copy = container.slice();
    copy[index] = updateIn(container[index], rest, edit);
    return copy;
  }
  if (isObject(container) && Object.hasOwn(container, head)) {
    const copy = { ...container };
    setMember(copy, head, updateIn(container[head], rest, edit));
    return copy;
  }
  throw new PatchError(`path ${formatPointer(tokens)} does not exist`);
}

function addAt(doc, tokens, value) {
  if (tokens.length === 0) return value;
  return updateIn(doc, tokens, (parent, key) => {
    if (Array.isArray(parent)) {
      const copy = parent.slice();
      copy.splice(arrayIndex(parent, key, true), 0, value);
      return copy;
    }
    if (!isObject(parent)) throw new PatchError("parent is not a container");
    const copy = { ...parent };
    setMember(copy, key, value);
    return copy;
  });
}

function removeAt(doc, tokens) {
  if (tokens.length === 0) return undefined;
  return updateIn(doc, tokens, (parent, key) => {
    if (Array.isArray(parent)) {
      const copy = parent.slice();
      copy.splice(arrayIndex(parent, key, false), 1);
      return copy;
    }
    if (!isObject(parent) || !Object.hasOwn(parent, key)) throw new PatchError(`nothing to remove at ${JSON.stringify(key)}`);
    const copy = { ...parent };
    delete copy[key];
    return copy;
  });
}

function valueAt(doc, tokens) {
  let value = doc;
  for (const token of tokens) {
    if (Array.isArray(value)) value = value[arrayIndex(value, token, false)];
    else if (isObject(value) && Object.hasOwn(value, token)) value = value[token];
    else throw new PatchError(`path ${formatPointer(tokens)} does not exist`);
  }
  return value;
}

function applyOne(doc, op) {
  if (!isObject(op) || typeof op.op !== "string") throw new PatchError("operation without op");
  const path = parsePointer(op.path);
  const needValue = () => {
    if (!Object.hasOwn(op, "value")) throw new PatchError(`${op.op} without value`);
    return op.value;
  };
  const from = () => {
    if (typeof op.from !== "string") throw new PatchError(`${op.op} without from`);
    return parsePointer(op.from);
  };
  switch (op.op) {
    case "add": return addAt(doc, path, needValue());
    case "remove": return removeAt(doc, path);
    case "replace": {
      const value = needValue();
      valueAt(doc, path);
      return path.length === 0 ? value : addAt(removeAt(doc, path), path, value);
    }
    case "move": {
      const source = from();
      if (source.length < path.length && source.every((t, i) => t === path[i])) throw new PatchError("cannot move a value into itself");
      const value = valueAt(doc, source);
      return addAt(removeAt(doc, source), path, value);
    }
    case "copy": return addAt(doc, path, valueAt(doc, from()));
    case "test":
      if (!jsonEqual(valueAt(doc, path), needValue())) throw new PatchError(`test failed at ${op.path}`);
      return doc;
    default: throw new PatchError(`unknown op ${JSON.stringify(op.op)}`);
  }
}

/**
 * Applies an RFC 6902 patch and returns the new document; `doc` is never modified (the
 * result shares every unchanged subtree with it). Throws {@link PatchError} if any operation
 * fails, in which case no change is visible anywhere.
 */
export function applyPatch(doc, ops) {
  if (!Array.isArray(ops)) throw new PatchError("a patch is an array of operations");
  let result = doc;
  ops.forEach((op, index) => {
    try { result = applyOne(result, op); } catch (error) {
      throw error instanceof PatchError ? new PatchError(error.message, index) : error;
    }
  });
  return result;
}
