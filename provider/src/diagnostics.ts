// Diagnostics are how every problem reaches the user: an error names the attribute it is about
// (OpenTofu then points at that line of the configuration) instead of failing the RPC.
export type PathStep = string | number;

export interface Diagnostic {
  severity: "ERROR" | "WARNING";
  summary: string;
  detail?: string;
  path?: PathStep[];
}

export const error = (summary: string, detail?: string, path?: PathStep[]): Diagnostic => ({
  severity: "ERROR",
  summary,
  detail,
  path,
});

export const warning = (summary: string, detail?: string, path?: PathStep[]): Diagnostic => ({
  severity: "WARNING",
  summary,
  detail,
  path,
});

/** An attribute path as the protocol spells it: names step into objects, numbers into lists. */
export function protoPath(path: PathStep[]) {
  return {
    steps: path.map((step) =>
      typeof step === "number" ? { element_key_int: step } : { attribute_name: step },
    ),
  };
}

export function protoDiagnostic(diagnostic: Diagnostic) {
  return {
    severity: diagnostic.severity,
    summary: diagnostic.summary,
    detail: diagnostic.detail ?? "",
    attribute: diagnostic.path ? protoPath(diagnostic.path) : undefined,
  };
}

/** Thrown inside a handler to stop with these diagnostics; anything else thrown becomes one too. */
export class DiagnosticError extends Error {
  constructor(readonly diagnostics: Diagnostic[]) {
    super(diagnostics.map((d) => d.summary).join("; "));
  }
}

export function diagnosticsOf(thrown: unknown): Diagnostic[] {
  if (thrown instanceof DiagnosticError) return thrown.diagnostics;
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return [error("Provider error", message)];
}
