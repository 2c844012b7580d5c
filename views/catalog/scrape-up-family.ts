/**
 * The per-replica gauge that says whether the replica's engine answered its last pull, named
 * under the pipeline prefix (`vllm:omni_engine_scrape_up`, or `vllm_omni:engine_scrape_up`), as
 * Prometheus's own `up` says it of a scrape target. Labels: `stage`, `replica`.
 */
export interface ScrapeUpFamily {
  readonly name: string;
  readonly help: string;
}

export function scrapeUpFamily(pipelinePrefix: string): ScrapeUpFamily {
  return {
    name: `${pipelinePrefix}engine_scrape_up`,
    help: "1 if the last pull of this replica's vLLM engine /metrics succeeded, 0 if it failed or timed out.",
  };
}
