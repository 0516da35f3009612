// App icon glyphs: a symbol guessed from the app's id or name (the demo apps), the day of the
// month for a calendar, else the name's initial.

const SYMBOLS = [
  [/coffee|cafe/, "☕"], [/ride|taxi|car/, "🚗"], [/score|sport|game/, "🏀"], [/timer|clock/, "⏱️"],
  [/workout|fitness|run/, "🏃"], [/weather/, "⛅"], [/music|audio/, "🎵"], [/maps|traffic|nav/, "🧭"],
  [/news/, "📰"], [/photo/, "🌅"], [/stock|finance/, "📈"],
];

export function appGlyph(app, now) {
  const key = `${app.id} ${app.name}`.toLowerCase();
  if (/calendar/.test(key)) return { kind: "calendar", text: String(new Date(now).getUTCDate()) };
  for (const [pattern, symbol] of SYMBOLS) if (pattern.test(key)) return { kind: "symbol", text: symbol };
  return { kind: "initial", text: (app.name ?? app.id ?? "?").trim().charAt(0).toUpperCase() };
}
