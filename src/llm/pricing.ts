// What a run costs: token usage priced per 1K tokens by model. Built-in agents and actions use no
// tokens and cost 0; a model missing from the table (a self-hosted one, say) is counted in tokens
// but priced at 0. Prices in USD, as published by the providers when this table was written.

export interface Price {
  inputPer1K: number;
  outputPer1K: number;
}

export const PRICE_TABLE: Readonly<Record<string, Price>> = {
  "gpt-4o": { inputPer1K: 0.0025, outputPer1K: 0.01 },
  "gpt-4o-mini": { inputPer1K: 0.00015, outputPer1K: 0.0006 },
  "gpt-4.1": { inputPer1K: 0.002, outputPer1K: 0.008 },
  "gpt-4.1-mini": { inputPer1K: 0.0004, outputPer1K: 0.0016 },
  "gpt-4.1-nano": { inputPer1K: 0.0001, outputPer1K: 0.0004 },
  "o4-mini": { inputPer1K: 0.0011, outputPer1K: 0.0044 },
};

export interface Usage {
  model: string;
  promptTokens: number;
  completionTokens: number;
}

export function costOf(usage: Usage | null | undefined): number {
  if (!usage) return 0;
  const price = PRICE_TABLE[usage.model.toLowerCase()];
  if (!price) return 0;
  const cost = (usage.promptTokens * price.inputPer1K + usage.completionTokens * price.outputPer1K) / 1000;
  // Sums of many small floats drift; ten decimals are far below a cent.
  return Math.round(cost * 1e10) / 1e10;
}
