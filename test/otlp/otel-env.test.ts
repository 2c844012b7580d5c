import assert from 'node:assert/strict';
import { resolveExportSettings } from '../../exporters/otlp/export-settings';
import { parseOtelEnv } from '../../exporters/otlp/otel-env';
import { hostname, release } from 'node:os';
import { readFileSync } from 'node:fs';
import { captureConsole, withEnv } from '../support/console-capture';
import { buildResource, serviceInstanceId } from '../../exporters/otlp/otel-resource';
import { registerOmniMetrics } from '../../register';
import { resourceFromAttributes } from '@opentelemetry/resources';

describe('parseOtelEnv (pure)', () => {
  it('nothing set (or only blanks): nothing configured', () => {
    const blank = parseOtelEnv({ OTEL_METRICS_EXPORTER: '  ', OTEL_EXPORTER_OTLP_PROTOCOL: '', PATH: '/bin' });
    assert.deepEqual(blank, {
      exporters: undefined,
      protocol: undefined,
      metricsEndpoint: undefined,
      endpoint: undefined,
      headers: undefined,
      timeoutMillis: undefined,
      compression: undefined,
      exportIntervalMillis: undefined,
      exportTimeoutMillis: undefined,
      temporality: undefined,
      defaultHistogramAggregation: undefined,
      resourceAttributes: {},
      resourceDetectors: undefined,
    });
  });

  it('reads every variable; enumerations are case-insensitive', () => {
    const env = parseOtelEnv({
      OTEL_METRICS_EXPORTER: ' OTLP , console,otlp ',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'GRPC',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317',
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'https://metrics.example:4318/custom/path',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
      OTEL_EXPORTER_OTLP_COMPRESSION: 'GZIP',
      OTEL_METRIC_EXPORT_INTERVAL: '15000',
      OTEL_METRIC_EXPORT_TIMEOUT: '5000',
      OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'LowMemory',
    });
    assert.deepEqual(env.exporters, ['otlp', 'console']);
    assert.deepEqual(env.protocol, { value: 'grpc', variable: 'OTEL_EXPORTER_OTLP_PROTOCOL' });
    assert.deepEqual(env.endpoint, { value: 'http://collector:4317', variable: 'OTEL_EXPORTER_OTLP_ENDPOINT' });
    assert.deepEqual(env.metricsEndpoint, { value: 'https://metrics.example:4318/custom/path', variable: 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT' });
    assert.deepEqual(env.timeoutMillis, { value: 2500, variable: 'OTEL_EXPORTER_OTLP_TIMEOUT' });
    assert.deepEqual(env.compression, { value: 'gzip', variable: 'OTEL_EXPORTER_OTLP_COMPRESSION' });
    assert.deepEqual(env.exportIntervalMillis, { value: 15000, variable: 'OTEL_METRIC_EXPORT_INTERVAL' });
    assert.deepEqual(env.exportTimeoutMillis, { value: 5000, variable: 'OTEL_METRIC_EXPORT_TIMEOUT' });
    assert.deepEqual(env.temporality, { value: 'lowmemory', variable: 'OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE' });
  });

  it('a metrics-specific variable wins over the generic one', () => {
    const env = parseOtelEnv({
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_TIMEOUT: '1000',
      OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: '3000',
      OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
      OTEL_EXPORTER_OTLP_METRICS_COMPRESSION: 'none',
      OTEL_EXPORTER_OTLP_HEADERS: 'a=generic,b=generic',
      OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'b=metrics,c=metrics',
    });
    assert.deepEqual(env.protocol, { value: 'http/json', variable: 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL' });
    assert.deepEqual(env.timeoutMillis, { value: 3000, variable: 'OTEL_EXPORTER_OTLP_METRICS_TIMEOUT' });
    assert.deepEqual(env.compression, { value: 'none', variable: 'OTEL_EXPORTER_OTLP_METRICS_COMPRESSION' });
    assert.deepEqual(env.headers, { a: 'generic', b: 'metrics', c: 'metrics' });
  });

  it('exporter list: `none` alone means no exporter', () => {
    assert.deepEqual(parseOtelEnv({ OTEL_METRICS_EXPORTER: 'none' }).exporters, ['none']);
    assert.deepEqual(parseOtelEnv({ OTEL_METRICS_EXPORTER: 'prometheus,otlp' }).exporters, ['prometheus', 'otlp']);
    assert.throws(() => parseOtelEnv({ OTEL_METRICS_EXPORTER: ',' }), /OTEL_METRICS_EXPORTER must be a comma-separated list/);
  });

  it('resource attributes: percent-decoded values; OTEL_SERVICE_NAME wins over service.name', () => {
    const env = parseOtelEnv({
      OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attrs, deployment.environment=prod%2Ceu ,team=a%3Db',
      OTEL_SERVICE_NAME: 'from-service-name',
    });
    assert.deepEqual(env.resourceAttributes, { 'service.name': 'from-service-name', 'deployment.environment': 'prod,eu', team: 'a=b' });
    assert.deepEqual(parseOtelEnv({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=only' }).resourceAttributes, { 'service.name': 'only' });
  });

  it('resource attributes and headers named like Object.prototype members are kept as their own keys', () => {
    const env = parseOtelEnv({ OTEL_RESOURCE_ATTRIBUTES: '__proto__=p,constructor=c,toString=t', OTEL_EXPORTER_OTLP_HEADERS: '__proto__=h' });
    assert.deepEqual(Object.entries(env.resourceAttributes), [
      ['__proto__', 'p'],
      ['constructor', 'c'],
      ['toString', 't'],
    ]);
    assert.equal(Object.getPrototypeOf(env.resourceAttributes), Object.prototype);
    assert.deepEqual(Object.entries(env.headers ?? {}), [['__proto__', 'h']]);
  });

  it('accepts host:port endpoints (for grpc) and rejects what is neither a URL nor host:port', () => {
    assert.equal(parseOtelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317' }).endpoint?.value, 'collector:4317');
    assert.throws(() => parseOtelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://x' }), /OTEL_EXPORTER_OTLP_ENDPOINT must be an http:\/\/ or https:\/\/ URL/);
  });

  it('an invalid generic value fails even when the metrics-specific one is valid', () => {
    assert.throws(
      () => parseOtelEnv({ OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: '100', OTEL_EXPORTER_OTLP_TIMEOUT: 'soon' }),
      /^RangeError: OTEL_EXPORTER_OTLP_TIMEOUT must be a positive integer number of milliseconds; got "soon"$/,
    );
  });
});

describe('resolveExportSettings: options over metrics variables over generic variables over defaults', () => {
  const none = parseOtelEnv({});

  it('defaults: Prometheus only; OTLP http/protobuf, cumulative, 60 s / 30 s', () => {
    const settings = resolveExportSettings({}, none);
    assert.deepEqual([...settings.exporters], ['prometheus']);
    assert.equal(settings.exportersSource, 'default');
    assert.deepEqual(settings.otlp, {
      protocol: 'http/protobuf',
      url: undefined,
      headers: undefined,
      timeoutMillis: undefined,
      compression: undefined,
      temporality: 'cumulative',
    });
    assert.equal(settings.exportIntervalMillis, 60000);
    assert.equal(settings.exportTimeoutMillis, 30000);
  });

  it('endpoint: the generic variable gains v1/metrics over HTTP and stays as given for grpc; the metrics variable stays as given', () => {
    const generic = parseOtelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' });
    assert.equal(resolveExportSettings({}, generic).otlp.url, 'http://collector:4318/v1/metrics');
    assert.equal(
      resolveExportSettings({ otlp: { protocol: 'http/json' } }, parseOtelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/base/' })).otlp.url,
      'http://c:4318/base/v1/metrics',
    );
    assert.equal(resolveExportSettings({ otlp: { protocol: 'grpc' } }, generic).otlp.url, 'http://collector:4318');
    const specific = parseOtelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://m:9/custom' });
    assert.equal(resolveExportSettings({}, specific).otlp.url, 'http://m:9/custom');
    assert.equal(resolveExportSettings({ otlp: { endpoint: 'http://option:1/x' } }, specific).otlp.url, 'http://option:1/x');
    // The option without a path is a base, as the generic variable is; with one, the full URL.
    assert.equal(resolveExportSettings({ otlp: { endpoint: 'http://option:4318' } }, none).otlp.url, 'http://option:4318/v1/metrics');
    assert.equal(resolveExportSettings({ otlp: { endpoint: 'https://option:4318/' } }, none).otlp.url, 'https://option:4318/v1/metrics');
    assert.equal(resolveExportSettings({ otlp: { endpoint: 'http://option:4318/v1/metrics' } }, none).otlp.url, 'http://option:4318/v1/metrics');
    assert.equal(resolveExportSettings({ otlp: { protocol: 'grpc', endpoint: 'http://option:4317' } }, none).otlp.url, 'http://option:4317');
    assert.throws(
      () => resolveExportSettings({ otlp: { endpoint: 'option:1' } }, none),
      /otlp.endpoint must be an http:\/\/ or https:\/\/ URL for protocol http\/protobuf/,
    );
  });

  it('every option wins over its variable; headers merge key by key', () => {
    const env = parseOtelEnv({
      OTEL_METRICS_EXPORTER: 'prometheus',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_HEADERS: 'a=env,b=env',
      OTEL_EXPORTER_OTLP_TIMEOUT: '1000',
      OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
      OTEL_METRIC_EXPORT_INTERVAL: '20000',
      OTEL_METRIC_EXPORT_TIMEOUT: '20000',
      OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'delta',
    });
    const settings = resolveExportSettings(
      {
        exporters: ['otlp'],
        otlp: {
          protocol: 'http/json',
          headers: { b: 'option' },
          timeoutMillis: 500,
          compression: 'none',
          exportIntervalMillis: 1000,
          exportTimeoutMillis: 800,
          temporality: 'cumulative',
        },
      },
      env,
    );
    assert.deepEqual([...settings.exporters], ['otlp']);
    assert.equal(settings.exportersSource, 'option');
    assert.deepEqual(settings.otlp, {
      protocol: 'http/json',
      url: undefined,
      headers: { a: 'env', b: 'option' },
      timeoutMillis: 500,
      compression: 'none',
      temporality: 'cumulative',
    });
    assert.equal(settings.exportIntervalMillis, 1000);
    assert.equal(settings.exportTimeoutMillis, 800);
    // And without options, the environment is used.
    const fromEnv = resolveExportSettings({}, env);
    assert.equal(fromEnv.exportersSource, 'env');
    assert.equal(fromEnv.otlp.protocol, 'grpc');
    assert.equal(fromEnv.otlp.temporality, 'delta');
    assert.equal(fromEnv.otlp.timeoutMillis, 1000);
    assert.equal(fromEnv.exportIntervalMillis, 20000);
  });

  it('a short interval lowers the default export timeout; an explicit larger timeout is an error', () => {
    assert.equal(resolveExportSettings({}, parseOtelEnv({ OTEL_METRIC_EXPORT_INTERVAL: '200' })).exportTimeoutMillis, 200);
    assert.throws(
      () => resolveExportSettings({ otlp: { exportIntervalMillis: 100, exportTimeoutMillis: 500 } }, none),
      /^RangeError: otlp.exportTimeoutMillis \(500\) must not exceed otlp.exportIntervalMillis \(100\)$/,
    );
  });

  it('exporters: none and [] run nothing', () => {
    assert.equal(resolveExportSettings({ exporters: ['none'] }, none).exporters.size, 0);
    assert.equal(resolveExportSettings({ exporters: [] }, none).exporters.size, 0);
    assert.equal(resolveExportSettings({}, parseOtelEnv({ OTEL_METRICS_EXPORTER: 'none' })).exporters.size, 0);
  });

  it('invalid options throw, naming the option', () => {
    const bad: Array<[Parameters<typeof resolveExportSettings>[0], RegExp]> = [
      [
        { exporters: ['otlp', 'zipkin' as 'otlp'] },
        /^OmniOptionError: omni-otel-metrics: exporters must list only prometheus, otlp, console, none; got \["otlp","zipkin"\]$/,
      ],
      [{ exporters: ['none', 'otlp'] }, /exporters: "none" cannot be combined/],
      [{ otlp: { protocol: 'thrift' as 'grpc' } }, /^RangeError: otlp.protocol must be one of http\/protobuf, http\/json, grpc; got the string "thrift"$/],
      [{ otlp: { compression: 'br' as 'gzip' } }, /otlp.compression must be one of gzip, none; got the string "br"/],
      [
        { otlp: { temporality: 'Delta' as 'delta' } },
        /otlp.temporality must be one of cumulative, delta, lowmemory; got the string "Delta" \(did you mean "delta"\?\)/,
      ],
      [{ otlp: { timeoutMillis: 0 } }, /otlp.timeoutMillis must be a positive number of milliseconds; got 0/],
      [{ otlp: { exportIntervalMillis: NaN } }, /otlp.exportIntervalMillis must be a positive number/],
      [{ otlp: { endpoint: '' } }, /otlp.endpoint must be a non-empty URL string/],
      [{ otlp: { headers: { a: 1 as unknown as string } } }, /otlp.headers must map header names to strings/],
    ];
    for (const [options, message] of bad) assert.throws(() => resolveExportSettings(options, none), message);
  });
});

describe('buildResource', () => {
  it('SDK default < OTEL_RESOURCE_ATTRIBUTES < OTEL_SERVICE_NAME < resource option < serviceName option', () => {
    const env = parseOtelEnv({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=attrs,a=env,b=env', OTEL_SERVICE_NAME: 'env-name' });
    assert.equal(buildResource(env).attributes['service.name'], 'env-name');
    assert.equal(buildResource(env).attributes['telemetry.sdk.language'], 'nodejs');
    const withOption = buildResource(env, { resource: resourceFromAttributes({ b: 'option', 'service.name': 'resource-option' }) });
    assert.deepEqual([withOption.attributes.a, withOption.attributes.b, withOption.attributes['service.name']], ['env', 'option', 'resource-option']);
    assert.equal(buildResource(env, { resource: resourceFromAttributes({ 'service.name': 'r' }), serviceName: 'svc' }).attributes['service.name'], 'svc');
    assert.match(String(buildResource(parseOtelEnv({})).attributes['service.name']), /^unknown_service/);
    assert.throws(() => buildResource(env, { serviceName: '' }), /serviceName must be a non-empty string/);
  });

  it('identifies the process: service.instance.id (one UUID per process) and the host, OS and process detectors, under the environment and the options', async () => {
    const detected = buildResource(parseOtelEnv({}));
    await detected.waitForAsyncAttributes?.();
    const attributes = detected.attributes;
    assert.match(String(attributes['service.instance.id']), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(attributes['service.instance.id'], serviceInstanceId());
    assert.equal(buildResource(parseOtelEnv({})).attributes['service.instance.id'], serviceInstanceId(), 'the same id for every registration of the process');
    assert.equal(attributes['host.name'], hostname());
    assert.equal(attributes['os.type'], 'linux');
    assert.equal(attributes['process.pid'], process.pid);
    assert.equal(attributes['process.runtime.name'], 'nodejs');
    assert.equal(attributes['telemetry.sdk.language'], 'nodejs');

    const env = parseOtelEnv({ OTEL_RESOURCE_ATTRIBUTES: 'service.instance.id=from-env,host.name=env-host' });
    const fromEnv = buildResource(env);
    await fromEnv.waitForAsyncAttributes?.();
    assert.deepEqual([fromEnv.attributes['service.instance.id'], fromEnv.attributes['host.name']], ['from-env', 'env-host']);
    const fromOption = buildResource(env, { resource: resourceFromAttributes({ 'service.instance.id': 'from-option' }) });
    await fromOption.waitForAsyncAttributes?.();
    assert.deepEqual([fromOption.attributes['service.instance.id'], fromOption.attributes['host.name']], ['from-option', 'env-host']);
  });

  it('registerOmniMetrics settles the resource (host.id, read from a file, included) before it serves', async () => {
    const resource = buildResource(parseOtelEnv({}));
    await resource.waitForAsyncAttributes?.();
    const handle = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1],
      prometheus: { host: '127.0.0.1', port: 0, withTargetInfo: true },
      selfCheck: false,
    });
    try {
      const targetInfo = (await handle.metricsText()).split('\n').find((line) => line.startsWith('target_info{')) ?? '';
      assert.ok(targetInfo.includes(`service_instance_id="${serviceInstanceId()}"`), targetInfo);
      if (resource.attributes['host.id'] !== undefined) assert.ok(targetInfo.includes(`host_id="${String(resource.attributes['host.id'])}"`), targetInfo);
    } finally {
      await handle.shutdown();
    }
  });
});

describe('OTEL_NODE_RESOURCE_DETECTORS', () => {
  const SDK = ['service.name', 'telemetry.sdk.language', 'telemetry.sdk.name', 'telemetry.sdk.version'];
  const ENV = { OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod,host.name=env-host', OTEL_SERVICE_NAME: 'tts' };

  async function attributes(variables: Record<string, string>, options: Parameters<typeof buildResource>[1] = {}): Promise<Record<string, unknown>> {
    const resource = buildResource(parseOtelEnv(variables), options);
    await resource.waitForAsyncAttributes?.();
    return { ...resource.attributes };
  }
  const keys = (record: Record<string, unknown>): string[] => Object.keys(record).sort();

  it('is read as @opentelemetry/sdk-node reads it: a comma list, `all` before `none`, unknown names kept apart', () => {
    assert.equal(parseOtelEnv({ OTEL_NODE_RESOURCE_DETECTORS: ' ' }).resourceDetectors, undefined);
    assert.deepEqual(parseOtelEnv({ OTEL_NODE_RESOURCE_DETECTORS: 'host, OS ,process,,host' }).resourceDetectors, {
      names: ['host', 'os', 'process'],
      unknown: [],
    });
    assert.deepEqual(parseOtelEnv({ OTEL_NODE_RESOURCE_DETECTORS: 'none,all,aws' }).resourceDetectors, {
      names: ['env', 'host', 'os', 'process', 'serviceinstance'],
      unknown: [],
    });
    assert.deepEqual(parseOtelEnv({ OTEL_NODE_RESOURCE_DETECTORS: 'host,none' }).resourceDetectors, { names: [], unknown: [] });
    assert.deepEqual(parseOtelEnv({ OTEL_NODE_RESOURCE_DETECTORS: 'env,aws,gcp,aws' }).resourceDetectors, { names: ['env'], unknown: ['aws', 'gcp'] });
  });

  it('none: only the SDK default, OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME ignored (the env detector did not run), the options still applied', async () => {
    const none = await attributes({ ...ENV, OTEL_NODE_RESOURCE_DETECTORS: 'none' });
    assert.deepEqual(keys(none), SDK);
    assert.match(String(none['service.name']), /^unknown_service:/);
    assert.deepEqual([none['telemetry.sdk.language'], none['telemetry.sdk.name']], ['nodejs', 'opentelemetry']);
    const withOptions = await attributes(
      { ...ENV, OTEL_NODE_RESOURCE_DETECTORS: 'none' },
      { resource: resourceFromAttributes({ team: 'speech' }), serviceName: 'svc' },
    );
    assert.deepEqual(keys(withOptions), [...SDK, 'team'].sort());
    assert.deepEqual([withOptions['service.name'], withOptions.team], ['svc', 'speech']);
  });

  it('each detector adds exactly its attributes', async () => {
    const only = async (name: string): Promise<Record<string, unknown>> => attributes({ ...ENV, OTEL_NODE_RESOURCE_DETECTORS: name });
    const env = await only('env');
    assert.deepEqual(keys(env), [...SDK, 'deployment.environment.name', 'host.name'].sort());
    assert.deepEqual([env['service.name'], env['deployment.environment.name'], env['host.name']], ['tts', 'prod', 'env-host']);

    const instance = await only('serviceinstance');
    assert.deepEqual(keys(instance), [...SDK, 'service.instance.id'].sort());
    assert.equal(instance['service.instance.id'], serviceInstanceId());

    const host = await only('host');
    assert.deepEqual(keys(host), [...SDK, 'host.arch', 'host.id', 'host.name'].sort());
    assert.deepEqual(
      [host['host.name'], host['host.arch'], host['host.id']],
      [hostname(), process.arch === 'x64' ? 'amd64' : process.arch, readFileSync('/etc/machine-id', 'utf8').trim()],
    );

    const os = await only('os');
    assert.deepEqual(keys(os), [...SDK, 'os.type', 'os.version'].sort());
    assert.deepEqual([os['os.type'], os['os.version']], ['linux', release()]);

    const proc = await only('process');
    assert.deepEqual(
      keys(proc),
      [
        ...SDK,
        'process.command',
        'process.command_args',
        'process.executable.name',
        'process.executable.path',
        'process.owner',
        'process.pid',
        'process.runtime.description',
        'process.runtime.name',
        'process.runtime.version',
      ].sort(),
    );
    assert.deepEqual([proc['process.pid'], proc['process.runtime.name'], proc['process.runtime.version']], [process.pid, 'nodejs', process.versions.node]);

    const two = await only('os,serviceinstance');
    assert.deepEqual(keys(two), [...SDK, 'os.type', 'os.version', 'service.instance.id'].sort());
  });

  it('unset or `all`: every detector, as without the variable', async () => {
    const unset = await attributes(ENV);
    const all = await attributes({ ...ENV, OTEL_NODE_RESOURCE_DETECTORS: 'all' });
    assert.deepEqual(keys(all), keys(unset));
    for (const key of ['service.instance.id', 'host.id', 'os.type', 'process.pid', 'deployment.environment.name']) assert.ok(key in all, key);
    assert.deepEqual([all['service.name'], all['host.name']], ['tts', 'env-host']);
  });

  it('a name it has no detector for is ignored with one warning, on the console when no diag logger is installed', async () => {
    let resource: Record<string, unknown> = {};
    const lines = await captureConsole(async () => {
      resource = await attributes({ OTEL_NODE_RESOURCE_DETECTORS: 'serviceinstance,no-such-detector' });
      await attributes({ OTEL_NODE_RESOURCE_DETECTORS: 'no-such-detector' });
    });
    assert.deepEqual(keys(resource), [...SDK, 'service.instance.id'].sort());
    assert.deepEqual(lines, [
      {
        method: 'warn',
        text:
          'omni-otel-metrics: OTEL_NODE_RESOURCE_DETECTORS names "no-such-detector", which is none of env, host, os, process, serviceinstance, all, none: ' +
          'ignored for the resource of the provider this package creates',
      },
    ]);
  });

  it("registerOmniMetrics builds its provider's resource with them (target_info shows it)", async () => {
    await withEnv({ OTEL_NODE_RESOURCE_DETECTORS: 'serviceinstance,env', OTEL_RESOURCE_ATTRIBUTES: 'team=speech', OTEL_SERVICE_NAME: undefined }, async () => {
      const handle = await registerOmniMetrics({ modelName: 'm', prometheus: { port: 0, withTargetInfo: true }, selfCheck: false, processMetrics: false });
      try {
        const targetInfo = (await handle.metricsText()).split('\n').find((line) => line.startsWith('target_info{')) ?? '';
        assert.match(
          targetInfo,
          new RegExp(
            `^target_info\\{service_instance_id="${serviceInstanceId()}",service_name="unknown_service:[^"]*",team="speech",telemetry_sdk_language="nodejs",telemetry_sdk_name="opentelemetry",telemetry_sdk_version="[^"]+"\\} 1(\\.0)?$`,
          ),
        );
      } finally {
        await handle.shutdown();
      }
    });
  });
});
