// Why a text is not JSON, without quoting it. JSON.parse's message quotes part of the text
// (`Unexpected token 'o', "token=whk_0"... is not valid JSON`); the reason ends up in invocation
// records and run lists, which must not carry pieces of a payload (a token in a body, say).

/** JSON.parse's reason for refusing a text, with any quoted excerpt of the text removed. */
export function jsonSyntaxReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, " (not valid JSON)");
}
