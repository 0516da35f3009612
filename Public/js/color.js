// Colors from app identities: a readable foreground for a background (when the app gives
// none), and a stable hue per widget for charts.

function rgb(color) {
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(color ?? "");
  if (!hex) return null;
  const digits = hex[1].length === 3 ? [...hex[1]].map((c) => c + c).join("") : hex[1];
  return [0, 2, 4].map((i) => parseInt(digits.slice(i, i + 2), 16) / 255);
}

/** WCAG relative luminance of a `#rgb`/`#rrggbb` color, or null for other syntaxes. */
export function luminance(color) {
  const channels = rgb(color);
  if (!channels) return null;
  const [r, g, b] = channels.map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** Black or white, whichever reads better on `background`. */
export function readableOn(background) {
  const l = luminance(background);
  if (l === null) return null;
  return (l + 0.05) / 0.05 > 1.05 / (l + 0.05) ? "#000000" : "#FFFFFF";
}

/** Whether a color is dark (luminance below 0.2). */
export const isDark = (color) => (luminance(color) ?? 1) < 0.2;

const PALETTE = ["#0A84FF", "#FF9F0A", "#30B158", "#FF375F", "#AF52DE", "#32ADE6", "#C9A400", "#A2845E", "#5E5CE6", "#FF6961"];

/** A chart color for the widget at `index` in its stack (distinct hues; app tints often clash). */
export const seriesColor = (index) => PALETTE[index % PALETTE.length];
