import type { SeriesStore } from '../../views/store/series-store';

/**
 * Sets `stage_info{model_name, stage, stage_name}` to 1 for each named stage. Names are known at
 * startup and do not change, so this runs once, at registration, whatever `logStats` says:
 * it describes the pipeline, it is not a statistic.
 */
export function recordStageNames(store: SeriesStore, modelName: string, stageNames: readonly string[]): void {
  stageNames.forEach((stageName, stage) => store.bind('pipeline.stageInfo', [modelName, String(stage), stageName]).record(1));
}
