// Reading a parser's result in its tests: the events of a result that must have succeeded.
import { expect } from "vitest";
import type { AlertEvent, ParseResult } from "../src/alerts/sources/types.ts";

/** The events of a successful result; throws with the parser's error otherwise. */
export function eventsOf(result: ParseResult): AlertEvent[] {
  if (!result.ok) throw new Error(`expected events, got error: ${result.error}`);
  return result.events;
}

/** The one event of a successful result that must yield exactly one. */
export function onlyEventOf(result: ParseResult): AlertEvent {
  const events = eventsOf(result);
  expect(events).toHaveLength(1);
  const [event] = events;
  if (!event) throw new Error("no event");
  return event;
}
