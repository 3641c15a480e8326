// What the provider reads from an answer of the service, checked before it reads it: a field that
// is missing or of another type means the answer did not come from Vigil (or not from a Vigil this
// provider knows), and must never turn into a null in state or an object taken for gone.

/** A JSON type, a list of one (`[shape]`), or an object with these fields (`name?`: may be absent or null). */
export type Shape =
  | "string"
  | "number"
  | "boolean"
  | "string map"
  | readonly [Shape]
  | { readonly [field: string]: Shape };

const KIND_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  boolean: "a boolean",
  "string map": "an object of strings",
};

/** What in `value` does not fit `shape`, as "where: what it must be"; empty when all fits. */
export function shapeProblems(value: unknown, shape: Shape, where = "the body"): string[] {
  if (typeof shape === "string") {
    return fitsKind(value, shape) ? [] : [`${where} must be ${KIND_NAMES[shape]}`];
  }
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) return [`${where} must be a list`];
    return value.flatMap((item, index) => shapeProblems(item, shape[0], `${where}[${index}]`));
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return [`${where} must be an object`];
  }
  const object = value as Record<string, unknown>;
  return Object.entries(shape).flatMap(([key, fieldShape]) => {
    const optional = key.endsWith("?");
    const name = optional ? key.slice(0, -1) : key;
    const field = object[name];
    const path = where === "the body" ? name : `${where}.${name}`;
    if (field === undefined || field === null) return optional ? [] : [`${path} is missing`];
    return shapeProblems(field, fieldShape, path);
  });
}

function fitsKind(value: unknown, kind: string): boolean {
  if (kind !== "string map") return typeof value === kind;
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((item) => typeof item === "string")
  );
}
