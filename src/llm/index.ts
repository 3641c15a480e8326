// Model access (an OpenAI-compatible endpoint, optional) and usage/cost accounting.
export { createLlmModel, describeLlmError, type LlmConfig } from "./model.ts";
export { costOf, type Usage } from "./pricing.ts";
