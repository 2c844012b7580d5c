/**
 * GenAI semantic-convention names (status "Development"), copied here because the npm
 * semantic-conventions package marks its GenAI constants deprecated.
 */

export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const ATTR_GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
export const ATTR_GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
export const ATTR_GEN_AI_TOKEN_TYPE = 'gen_ai.token.type';
export const ATTR_ERROR_TYPE = 'error.type';

export const GEN_AI_OPERATION_NAME_VALUE_CHAT = 'chat';
export const GEN_AI_PROVIDER_NAME_VALUE_VLLM = 'vllm';
export const GEN_AI_TOKEN_TYPE_VALUE_INPUT = 'input';
export const GEN_AI_TOKEN_TYPE_VALUE_OUTPUT = 'output';

/** Recommended bucket boundaries. */
export const GEN_AI_TIME_TO_FIRST_TOKEN_BUCKETS: readonly number[] = Object.freeze([
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
]);
export const GEN_AI_TIME_PER_OUTPUT_TOKEN_BUCKETS: readonly number[] = Object.freeze([0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5]);
/** 0.01 s doubling to 81.92 s. */
export const GEN_AI_DURATION_BUCKETS: readonly number[] = Object.freeze([
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
]);
/** 1 token, times four, to 67 108 864. */
export const GEN_AI_TOKEN_BUCKETS: readonly number[] = Object.freeze([
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
]);

export interface GenAiMetricDefinition {
  readonly name: string;
  readonly unit: string;
  readonly description: string;
  readonly buckets: readonly number[];
}

/** The four histograms `genAiMetrics: true` adds. */
export const GEN_AI_METRICS = Object.freeze({
  timeToFirstToken: {
    name: 'gen_ai.server.time_to_first_token',
    unit: 's',
    description: 'Time to generate first token for successful responses.',
    buckets: GEN_AI_TIME_TO_FIRST_TOKEN_BUCKETS,
  },
  timePerOutputToken: {
    name: 'gen_ai.server.time_per_output_token',
    unit: 's',
    description: 'Time per output token generated after the first token for successful responses.',
    buckets: GEN_AI_TIME_PER_OUTPUT_TOKEN_BUCKETS,
  },
  requestDuration: {
    name: 'gen_ai.server.request.duration',
    unit: 's',
    description: 'Generative AI server request duration such as time-to-last byte or last output token.',
    buckets: GEN_AI_DURATION_BUCKETS,
  },
  tokenUsage: {
    name: 'gen_ai.client.token.usage',
    unit: '{token}',
    description: 'Number of input and output tokens used.',
    buckets: GEN_AI_TOKEN_BUCKETS,
  },
} satisfies Record<string, GenAiMetricDefinition>);
