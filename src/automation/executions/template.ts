// `{{path}}` templates over a run's context: `{{input.service}}`, `{{stages.collect.output.status}}`,
// `{{stages.fetch.output.body.items.0.name}}`. A missing path renders as the empty string. Only own
// properties are followed, so a template cannot reach prototypes.

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_$-]+(?:\.[A-Za-z0-9_$-]+)*)\s*\}\}/g;
const WHOLE_PLACEHOLDER = /^\{\{\s*([A-Za-z0-9_$-]+(?:\.[A-Za-z0-9_$-]+)*)\s*\}\}$/;

export function lookup(context: unknown, path: string): unknown {
  let value: unknown = context;
  for (const part of path.split(".")) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

export function asText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

/** Replaces every placeholder by its value as text (objects as JSON). */
export function renderText(template: string, context: unknown): string {
  return template.replace(PLACEHOLDER, (_, path: string) => asText(lookup(context, path)));
}

/**
 * Renders every string inside a settings value. A string that is exactly one placeholder takes the
 * value itself (an object stays an object, a number a number); a missing one becomes null.
 */
export function renderValue(value: unknown, context: unknown): unknown {
  if (typeof value === "string") {
    const whole = WHOLE_PLACEHOLDER.exec(value);
    if (whole?.[1]) return lookup(context, whole[1]) ?? null;
    return renderText(value, context);
  }
  if (Array.isArray(value)) return value.map((item) => renderValue(item, context));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, renderValue(item, context)]));
  }
  return value;
}
