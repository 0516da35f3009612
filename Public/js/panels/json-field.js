// A labelled JSON editor (a textarea that validates as you type and reports the error).

import { h, setText, setAttr } from "../dom.js";

let counter = 0;

export class JsonField {
  constructor(label, { rows = 5, optional = false, id = null } = {}) {
    counter += 1;
    id ??= `json-${counter}`;
    this.optional = optional;
    this.textarea = h("textarea", { id, rows, spellcheck: false, class: "code", attrs: { "aria-describedby": `${id}-error` }, on: { input: () => this.validate() } });
    this.error = h("p", { class: "field-error", id: `${id}-error`, attrs: { "aria-live": "polite" } });
    this.el = h("div", { class: "field" }, h("label", { attrs: { for: id }, text: label }), this.textarea, this.error);
  }

  set value(value) {
    this.textarea.value = value === undefined ? "" : JSON.stringify(value, null, 2);
    this.validate();
  }

  /** The parsed value (`undefined` when optional and empty); throws when invalid. */
  get value() {
    const text = this.textarea.value.trim();
    if (!text && this.optional) return undefined;
    return JSON.parse(text);
  }

  get dirty() { return this.textarea.dataset.dirty === "true"; }

  validate() {
    try {
      const value = this.value;
      if (value !== undefined && (value === null || typeof value !== "object" || Array.isArray(value))) throw new Error("expected a JSON object");
      setText(this.error, "");
      setAttr(this.textarea, "aria-invalid", null);
      return true;
    } catch (error) {
      setText(this.error, error.message);
      setAttr(this.textarea, "aria-invalid", "true");
      return false;
    }
  }
}
