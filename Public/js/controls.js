// Shared form controls.

import { h } from "./dom.js";

/** A segmented control (radio buttons styled as one control). */
export function segmented(label, name, options, onChange) {
  const inputs = new Map();
  const el = h("div", { class: "segmented", attrs: { role: "radiogroup", "aria-label": label } },
    ...options.map(([value, text]) => {
      const id = `${name}-${value}`;
      const input = h("input", { type: "radio", name, id, value, on: { change: () => onChange(value) } });
      inputs.set(value, input);
      return h("span", { class: "segment" }, input, h("label", { attrs: { for: id }, text }));
    }));
  return {
    el,
    set(value) {
      for (const [v, input] of inputs) input.checked = v === value;
    },
  };
}
