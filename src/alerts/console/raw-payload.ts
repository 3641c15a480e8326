// An alert's raw_payload: the body of the delivery that last changed it. A pushed delivery's body
// is its webhook invocation record's payload, the bytes as received; a pulled answer's (and a push
// stored before the invocation record held it) is an alert_payloads row. raw_payload_id names one
// or the other: a read left-joins both on it, and at most one matches.
import { storableText, webhookInvocations } from "../../webhooks/index.ts";
import { alertPayloads } from "../tables.ts";

/** The columns a read selects for rawPayloadText. */
export const rawPayloadColumns = { storedBody: alertPayloads.body, receivedBody: webhookInvocations.payload };

/**
 * The body as text, as ingest read it: bytes decoded as UTF-8 (a malformed sequence becomes
 * U+FFFD), then made storable (storable.ts), so a body read back is the one the alerts were parsed from.
 */
export function rawPayloadText(row: {
  storedBody: string | null;
  receivedBody: Buffer | null;
}): string | null {
  if (row.storedBody !== null) return row.storedBody;
  return row.receivedBody === null ? null : storableText(row.receivedBody.toString("utf8"));
}
