/**
 * The exemplar record-path contenders, each alone in its process (`contenders/exemplar-record.ts`):
 * one finished request's records as the serving observer makes them (its clock reading for the
 * request's latency, then `pipeline.requestSucceeded`: the success counter and the e2e histogram,
 * both families that keep exemplars) with
 * - `exemplars-off`: exemplars off (the plain series classes, the record path as it always was);
 * - `exemplars-untraced`: exemplars on, no trace anywhere (the context lookup finds none);
 * - `exemplars-traced`: exemplars on, the request's trace named around the records as the hooks
 *   name it, so every record also keeps its exemplar.
 */
export const EXEMPLAR_CONTENDERS = ['exemplars-off', 'exemplars-untraced', 'exemplars-traced'] as const;
export type ExemplarContender = (typeof EXEMPLAR_CONTENDERS)[number];
