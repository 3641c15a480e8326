// The one-line summary of a concluded investigation, as every way of concluding writes it: the
// rule-based investigator, the model's review and a conclusion reported through the callbacks.

/** `verdict: what broke. What to do.`, the lead closed as a sentence so the advice does not run into it. */
export function resultSummaryOf(
  verdict: string | undefined,
  lead: string | null | undefined,
  whatToDo: string | null | undefined,
) {
  const trimmed = (lead ?? "").trimEnd();
  const sentence = trimmed === "" || /[.!?…]["')\]]?$/.test(trimmed) ? trimmed : `${trimmed}.`;
  return `${verdict ?? "not_enough_information"}: ${sentence} ${whatToDo ?? ""}`.trimEnd();
}
