import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';

const EXAMPLES = join(__dirname, '..', '..', 'examples');

export interface DashboardQuery {
  /** The title of the row the panel is in. */
  readonly row: string;
  readonly panel: string;
  readonly expr: string;
}

/** Every panel query of the shipped Grafana dashboard, with the row and panel it belongs to, in order. */
export function dashboardQueries(): DashboardQuery[] {
  const dashboard = JSON.parse(readFileSync(join(EXAMPLES, 'grafana', 'omni-pipeline-dashboard.json'), 'utf8')) as {
    panels: Array<{ type: string; title: string; targets?: Array<{ expr: string }> }>;
  };
  let row = '';
  return dashboard.panels.flatMap((panel) => {
    if (panel.type === 'row') row = panel.title;
    return (panel.targets ?? []).map((target) => ({ row, panel: panel.title, expr: target.expr }));
  });
}

export interface AlertRule {
  readonly group: string;
  readonly alert: string;
  readonly expr: string;
}

/** Every rule of the shipped `alerts.yml`, with its group. */
export function alertRules(): AlertRule[] {
  const file = parseYaml(readFileSync(join(EXAMPLES, 'prometheus', 'alerts.yml'), 'utf8')) as {
    groups: Array<{ name: string; rules: Array<{ alert: string; expr: string }> }>;
  };
  return file.groups.flatMap((group) => group.rules.map((rule) => ({ group: group.name, alert: rule.alert, expr: rule.expr })));
}

/** `a > 0.9` → `a`: the comparison with a number at the end of an alert expression, outside any parentheses. */
export function watched(expr: string): string {
  let depth = 0;
  for (let i = 0; i < expr.length; i++) {
    const char = expr[i];
    if (char === '(' || char === '{' || char === '[') depth++;
    else if (char === ')' || char === '}' || char === ']') depth--;
    else if (depth === 0 && /[<>]=?|==|!=/.test(expr.slice(i, i + 2)) && /^\s*(?:[<>]=?|==|!=)\s*[\d.]+\s*$/.test(expr.slice(i)))
      return expr.slice(0, i).trim();
  }
  return expr.trim();
}

/**
 * A query as Prometheus runs it: Grafana's variables filled in (every stage, replica and tenant,
 * the model, a one-minute rate window), and with `job`, every selector narrowed to that job.
 */
export function filledIn(expr: string, model: string, job?: string): string {
  const filled = expr
    .replace(/\$__rate_interval/g, '1m')
    .replace(/\$model_name/g, model)
    .replace(/\$stage|\$replica|\$tenant/g, '.*');
  return job === undefined
    ? filled
    : filled.replace(/(vllm:[a-z0-9_:]+)(\{)?/g, (_, name: string, brace?: string) => `${name}{job="${job}"${brace ? ', ' : '}'}`);
}
