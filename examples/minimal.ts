/**
 * The smallest instrumented pipeline: a one-stage host (a stand-in for vLLM-Omni's orchestrator and
 * AsyncOmni), hooked at startup, serving one request; then what /metrics says about it.
 * Runs as written: npx tsx examples/minimal.ts here; in a project of your own (npm install omni-otel-metrics
 * @opentelemetry/api tsx), copy it to minimal.mts and run npx tsx minimal.mts.
 */
import { OmniInstrumentation, registerOmniMetrics, type OmniRequestOutput } from 'omni-otel-metrics';

class Orchestrator {
  readonly running = new Set<string>();
  addRequest(request: { requestId: string }): void {
    this.running.add(request.requestId);
  }
  cleanupRequest(requestId: string): void {
    this.running.delete(requestId);
  }
}

class Serving {
  constructor(private readonly orchestrator: Orchestrator) {}

  async *generate(request: { requestId: string; prompt: string }): AsyncGenerator<OmniRequestOutput> {
    const reply = { requestId: request.requestId, stageId: 0, replicaId: 0, finalOutputType: 'text' };
    this.orchestrator.addRequest(request);
    try {
      yield { ...reply, finished: false, text: 'Hello' };
      yield { ...reply, finished: true, finishReason: 'stop', text: 'Hello there!', stageMetrics: [{ stageId: 0, numTokensIn: 12, numTokensOut: 5, stageGenTimeMs: 40 }] };
    } finally {
      this.orchestrator.cleanupRequest(request.requestId);
    }
  }
}

async function main(): Promise<void> {
  const metrics = await registerOmniMetrics({ modelName: 'demo', logStats: true, prometheus: { port: 0 }, processMetrics: false });
  const hooks = new OmniInstrumentation({ metrics, orchestratorClass: Orchestrator, servingClass: Serving });

  for await (const output of new Serving(new Orchestrator()).generate({ requestId: 'r1', prompt: 'Hi' })) console.log('reply:', output.text);

  const scrape = await (await fetch(metrics.prometheusServer!.url)).text();
  console.log(scrape.split('\n').filter((line) => /^vllm:omni_(requests_success|prompt_tokens|generation_tokens)_total/.test(line)).join('\n'));
  hooks.disable();
  await metrics.shutdown();
}

void main();
