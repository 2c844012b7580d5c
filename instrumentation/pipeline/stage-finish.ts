import type { OmniRecorders } from '../recorders/recorders';
import type { OmniRequestOutput } from './host-contract';

/**
 * The per-stage statistics of a finished request (`stageMetrics` on its final output): each
 * stage's generation time, workload, queueing, peak memory and image time to first output; then
 * the final stage's diffusion breakdown, as upstream records it at finalize.
 */
export function observeFinishedStages(recorders: Pick<OmniRecorders, 'stageService' | 'diffusion'>, output: OmniRequestOutput): void {
  const { stageService, diffusion } = recorders;
  for (const stage of output.stageMetrics ?? []) {
    // Only the final stage's replica is on the output; earlier stages name theirs or go without.
    const replica = stage.replicaId ?? (stage.stageId === output.stageId ? output.replicaId : undefined);
    const breakdown = stage.diffusionMetrics ?? undefined;
    stageService.observeStageFinished({
      stageId: stage.stageId,
      stageType: stage.stageType,
      stageGenTimeMs: stage.stageGenTimeMs,
      outputUnitType: stage.outputUnitType,
      outputUnitCount: stage.outputUnitCount,
      imagePixels: stage.imagePixels,
      // The stage's own count only: the breakdown's count serves the per-step figures, not this histogram.
      numInferenceSteps: stage.numInferenceSteps,
      peakMemoryMb: stage.peakMemoryMb,
      schedulerQueueWaitS: breakdown?.schedulerQueueWaitS,
    });
    if (stage.outputUnitType === 'image' && typeof stage.imageTimeToFirstOutputMs === 'number' && replica !== undefined) {
      diffusion.observeImageTtfp(stage.stageId, replica, stage.imageTimeToFirstOutputMs / 1000);
    }
    if (stage.stageId === output.stageId) {
      diffusion.observeDiffusionFinalize({
        stageId: stage.stageId,
        replicaId: replica,
        breakdown,
        numInferenceSteps: stage.numInferenceSteps,
        outputUnitType: stage.outputUnitType,
      });
    }
  }
}
