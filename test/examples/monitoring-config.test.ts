import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';

import { DASHBOARD_PATH, dashboardJson } from '../../examples/grafana/build-dashboard';
import { resolveFullCatalog } from '../../views/catalog/catalog';
import { filledIn } from '../support/monitoring-queries';
import { checkConfig, checkRules } from '../support/promtool';
import { queryResultChoices, queryResultExpr, type GrafanaVariable, type InstantSample } from '../support/grafana-variables';
import { needPeer } from '../support/peers/need-peer';

const PROMETHEUS_DIR = path.join(__dirname, '../../examples/prometheus');
// Digits included: `vllm:e2e_request_latency_seconds` would otherwise be read as `vllm:e`.
const METRIC_NAME = /vllm:[a-z0-9_:]+/g;
const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'];

/** Every name a query may use: gauges and counters as exposed, histograms through their series. */
function exposedSeriesNames(): Set<string> {
  const names = new Set<string>();
  for (const family of resolveFullCatalog().families) {
    if (family.type === 'histogram') for (const suffix of HISTOGRAM_SUFFIXES) names.add(family.name + suffix);
    else names.add(family.name);
  }
  return names;
}

/** The catalog family a series name belongs to (histogram series through their suffix). */
function familyOf(seriesName: string): ReturnType<ReturnType<typeof resolveFullCatalog>['byName']> {
  const catalog = resolveFullCatalog();
  const suffix = HISTOGRAM_SUFFIXES.find((s) => seriesName.endsWith(s));
  return catalog.byName(seriesName) ?? (suffix ? catalog.byName(seriesName.slice(0, -suffix.length)) : undefined);
}

function unknownNames(expressions: readonly string[]): string[] {
  const known = exposedSeriesNames();
  return [...new Set(expressions.flatMap((expr) => expr.match(METRIC_NAME) ?? []))].filter((name) => !known.has(name));
}

interface DashboardPanel {
  type: string;
  title: string;
  targets?: Array<{ expr: string; exemplar?: boolean; legendFormat?: string }>;
}

interface Dashboard {
  panels: DashboardPanel[];
  templating: { list: GrafanaVariable[] };
}

function dashboardExpressions(dashboard: Dashboard): string[] {
  const panelExprs = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
  const variableExprs = dashboard.templating.list.flatMap((variable) => {
    const query = (variable.query as { query?: string } | undefined)?.query;
    if (query === undefined) return [];
    return [query.startsWith('query_result(') ? queryResultExpr(variable) : query];
  });
  return [...panelExprs, ...variableExprs];
}

describe('examples: Prometheus and Grafana files', function () {
  needPeer('debian-prometheus', this);
  this.timeout(20_000);

  it('prometheus.yml passes `promtool check config` (which also loads alerts.yml)', async () => {
    const result = await checkConfig(path.join(PROMETHEUS_DIR, 'prometheus.yml'));
    assert.ok(result.ok, result.output);
    assert.match(result.output, /1 rule files found/);
  });

  it('alerts.yml passes `promtool check rules` and uses only catalog names', async () => {
    const file = path.join(PROMETHEUS_DIR, 'alerts.yml');
    const result = await checkRules(file, { lintFatal: true });
    assert.ok(result.ok, result.output);
    const rules = (parseYaml(readFileSync(file, 'utf8')) as { groups: Array<{ rules: Array<{ expr: string }> }> }).groups.flatMap((g) => g.rules);
    assert.ok(rules.length >= 8);
    assert.deepEqual(unknownNames(rules.map((r) => r.expr)), []);
  });

  it('the dashboard JSON is what build-dashboard.ts generates', () => {
    assert.equal(readFileSync(DASHBOARD_PATH, 'utf8'), dashboardJson(), 'regenerate with `npx tsx examples/grafana/build-dashboard.ts`');
  });

  describe('omni-pipeline-dashboard.json', () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD_PATH, 'utf8')) as Dashboard;
    const expressions = dashboardExpressions(dashboard);

    it('has stage and replica variables and panels for every concern', () => {
      const variables = dashboard.templating.list.map((v) => v.name);
      for (const name of ['datasource', 'model_name', 'stage', 'replica']) assert.ok(variables.includes(name), name);
      const titles = dashboard.panels.map((p) => p.title).join('\n');
      for (const word of [
        'Time to first token',
        'Inter-token',
        'Queue / prefill / decode',
        'KV cache',
        'Request success',
        'first audio packet',
        'Real-time factor',
        'underrun',
        'Silent audio loss',
        'Sender',
        'Receiver',
        'In-flight',
        'Payload size',
        'Failed requests',
        'Images generated',
        'Image time to first output',
        'Diffusion breakdown',
        'Denoise step',
        'Diffusion queue',
        'Peak memory',
        'per tenant',
        'per priority',
        'Goodput',
        'SLO attainment',
        'SLO misses by objective',
      ]) {
        assert.ok(titles.includes(word), `no panel about "${word}"`);
      }
    });

    it('draws exemplars on exactly the latency quantiles (histograms in seconds, whose buckets keep them)', () => {
      const targets = dashboard.panels.flatMap((panel) => panel.targets ?? []);
      const latency = (expr: string): boolean => /^histogram_quantile\(.*\((vllm:[\w:]+_(seconds|s))_bucket\{/.test(expr);
      const drawn = targets.filter((target) => target.exemplar === true).map((target) => target.expr);
      assert.deepEqual(drawn, targets.map((target) => target.expr).filter(latency));
      assert.ok(drawn.length >= 20, `${drawn.length} latency targets`);
    });

    it('names stages in every per-stage legend: joined from vllm:omni_stage_info, "stage N" where no name is given', () => {
      const targets = dashboard.panels.flatMap((panel) => panel.targets ?? []);
      const perStage = targets.filter((target) => /\bstage\b/.test(target.expr.split(' * on (stage)')[0] ?? '') && /by \([^)]*\bstage\b/.test(target.expr));
      assert.ok(perStage.length >= 20, `${perStage.length} per-stage targets`);
      for (const target of perStage) {
        assert.ok(target.legendFormat?.includes('{{stage_name}}'), target.legendFormat);
        assert.ok(!target.legendFormat?.includes('{{stage}}'), target.legendFormat);
        const [named, fallback] = target.expr.split(' or ignoring (stage_name) ');
        assert.ok(
          named?.endsWith(' * on (stage) group_left (stage_name) max by (stage, stage_name) (vllm:omni_stage_info{model_name="$model_name"})'),
          target.expr,
        );
        assert.ok(fallback?.startsWith('label_replace('), target.expr);
        assert.ok(fallback?.endsWith(', "stage_name", "stage $1", "stage", "(.*)")'), target.expr);
      }
    });

    it('references only metric names the catalog defines (histograms via _bucket/_sum/_count)', () => {
      assert.ok(expressions.length > 30);
      assert.deepEqual(unknownNames(expressions), []);
    });

    it('filters every query by the stage and replica variables its families carry', () => {
      // The panels' queries: the variables' own queries list the values these filter on.
      const queries = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
      const labelsOf = (expr: string): Set<string> => new Set((expr.match(METRIC_NAME) ?? []).flatMap((name) => familyOf(name)?.labels ?? []));
      const perReplica = queries.filter((e) => labelsOf(e).has('replica'));
      const perStage = queries.filter((e) => labelsOf(e).has('stage') && !labelsOf(e).has('replica') && !labelsOf(e).has('from_stage'));
      assert.ok(perReplica.length > 25, `only ${perReplica.length} per-replica queries found`);
      assert.ok(perStage.length >= 4, `only ${perStage.length} per-stage queries found`);
      for (const expr of perReplica) assert.match(expr, /stage=~"\$stage", replica=~"\$replica"/, expr);
      for (const expr of perStage) assert.match(expr, /stage=~"\$stage"/, expr);
    });

    it('every query parses as PromQL (checked by promtool as recording rules)', async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'omni-dashboard-'));
      try {
        const rules = expressions
          .filter((expr) => !expr.startsWith('label_values'))
          .map((expr, i) => `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(filledIn(expr, 'm'))}`);
        const file = path.join(dir, 'dashboard-rules.yml');
        writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules.join('\n')}\n`);
        const result = await checkRules(file);
        assert.ok(result.ok, result.output);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});

describe('omni-pipeline-dashboard.json: its variables and tenant panels', () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD_PATH, 'utf8')) as Dashboard;
  const stage = dashboard.templating.list.find((variable) => variable.name === 'stage') as GrafanaVariable;

  it('the stage variable offers every stage from vllm:omni_stage_info, its name as the text, and stages it does not name by id', () => {
    assert.match(queryResultExpr(stage), /^max by \(stage, stage_name\) \(vllm:omni_stage_info\{model_name="\$model_name"\}\) or on \(stage\) /);
    const results: InstantSample[] = [
      { metric: { stage: '0', stage_name: 'thinker' } },
      { metric: { stage: '3', stage_name: 'diffusion' } },
      { metric: { stage: '1', stage_name: 'talker' } },
      { metric: { stage: '4' } },
    ];
    assert.deepEqual(queryResultChoices(stage, results), [
      { value: '0', text: 'thinker' },
      { value: '3', text: 'diffusion' },
      { value: '1', text: 'talker' },
      { value: '4', text: '4' },
    ]);
  });

  it('tenant panels select tenant series only: without requestLabels they are empty, not the untenanted total', () => {
    const tenantQueries = dashboardExpressions(dashboard).filter((expr) => expr.includes('$tenant'));
    assert.ok(tenantQueries.length >= 7, `${tenantQueries.length} tenant queries`);
    for (const expr of tenantQueries) {
      const selectors = expr.match(/\{[^}]*\$tenant[^}]*\}/g) ?? [];
      assert.ok(selectors.length > 0, expr);
      for (const selector of selectors) assert.match(selector, /tenant=~"\$tenant", tenant!=""/, expr);
    }
  });
});
