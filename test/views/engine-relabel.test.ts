import assert from 'node:assert/strict';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { OmniPrometheusReader } from '../../exporters/prometheus-reader';
import { EngineRelabelProcessor } from '../../views/engine-relabel-processor';
import { expectPrinted } from '../support/console-capture';
import { StageReplicaMap } from '../../views/stage-replica-map';

describe('StageReplicaMap', () => {
  it('flattens pools in stage order: [1, 2, 1] → 0:(0,0) 1:(1,0) 2:(1,1) 3:(2,0)', () => {
    const map = new StageReplicaMap([1, 2, 1]);
    assert.deepEqual(
      map.entries().map(([engine, sr]) => [engine, sr.stage, sr.replica]),
      [
        [0, '0', '0'],
        [1, '1', '0'],
        [2, '1', '1'],
        [3, '2', '0'],
      ],
    );
    assert.equal(map.engineIndex(1, 1), 2);
    assert.equal(map.engineIndex(2, 0), 3);
    assert.equal(map.engineIndex(1, 2), undefined);
    assert.equal(map.engineIndex(3, 0), undefined);
    assert.equal(map.lookup(4), undefined);
    assert.equal(map.engineCount, 4);
  });

  it('an empty pool list maps no engine; non-positive or fractional replica counts are refused', () => {
    assert.equal(new StageReplicaMap([]).engineCount, 0);
    assert.throws(() => new StageReplicaMap([1, 0]), /stagePools\[1\] must be a positive integer replica count; got 0/);
    assert.throws(() => new StageReplicaMap([1.5]), /stagePools\[0\]/);
  });
});

describe('EngineRelabelProcessor', () => {
  const processor = new EngineRelabelProcessor(new StageReplicaMap([1, 2, 1]));

  it('turns engine into stage + replica, keeping every other attribute', () => {
    assert.deepEqual(processor.process({ model_name: 'm', engine: '2', finished_reason: 'stop' }), {
      model_name: 'm',
      finished_reason: 'stop',
      stage: '1',
      replica: '1',
    });
    assert.deepEqual(processor.process({ engine: 3 }), { stage: '2', replica: '0' });
  });

  it('returns the same object when there is no engine, and a cached object for a reused input', () => {
    const plain = { model_name: 'm' };
    assert.equal(processor.process(plain), plain);
    const input = { model_name: 'm', engine: '0' };
    assert.equal(processor.process(input), processor.process(input));
  });

  it('keeps an unknown engine visible without throwing, with one warning per engine', async () => {
    await expectPrinted(
      [
        'omni-otel-metrics: engine index 9 is not in the stage/replica map; recorded as stage="unknown"',
        'omni-otel-metrics: engine index x is not in the stage/replica map; recorded as stage="unknown"',
      ],
      () => {
        assert.deepEqual(processor.process({ model_name: 'm', engine: '9' }), { model_name: 'm', stage: 'unknown', replica: '9' });
        assert.deepEqual(processor.process({ engine: 'x' }), { stage: 'unknown', replica: 'x' });
      },
    );
  });

  it('works in a user view on a user instrument', async () => {
    const reader = new OmniPrometheusReader({ createdSeries: false });
    const provider = new MeterProvider({
      readers: [reader],
      views: [{ instrumentName: 'my.engine.steps', name: 'my_engine_steps', attributesProcessors: [processor] }],
    });
    const counter = provider.getMeter('mine').createCounter('my.engine.steps', { description: 'Steps.' });
    counter.add(2, { engine: '1' });
    counter.add(5, { engine: '2' });
    const text = await reader.metricsText();
    await provider.shutdown();
    assert.equal(
      text,
      '# HELP my_engine_steps_total Steps.\n# TYPE my_engine_steps_total counter\nmy_engine_steps_total{replica="0",stage="1"} 2.0\nmy_engine_steps_total{replica="1",stage="1"} 5.0\n',
    );
  });
});
