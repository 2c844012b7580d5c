/** A Grafana query variable of the shipped dashboard, as its JSON has it. */
export interface GrafanaVariable {
  readonly name: string;
  readonly query?: unknown;
  readonly regex?: string;
}

/** One instant-query result, as Prometheus's HTTP API returns it. */
export interface InstantSample {
  readonly metric: Readonly<Record<string, string>>;
}

/** The PromQL of a `query_result(…)` variable. */
export function queryResultExpr(variable: GrafanaVariable): string {
  const query = (variable.query as { query?: string } | undefined)?.query ?? '';
  const expr = /^query_result\((.*)\)$/s.exec(query)?.[1];
  if (expr === undefined) throw new Error(`${variable.name} is not a query_result variable: ${query}`);
  return expr;
}

/**
 * The choices Grafana's Prometheus data source makes of a `query_result` variable's results: each
 * result printed as `name{label="value",…} value time` (labels in the order Prometheus returns them,
 * sorted by name), then the variable's regex, whose `value` and `text` groups give the choice (the
 * text defaults to the value); results the regex does not match are left out.
 */
export function queryResultChoices(variable: GrafanaVariable, results: readonly InstantSample[]): Array<{ value: string; text: string }> {
  const regex = /^\/(.*)\/([a-z]*)$/s.exec(variable.regex ?? '');
  if (regex === null) throw new Error(`${variable.name} has no /regex/`);
  const pattern = new RegExp(regex[1] as string, regex[2]);
  return results.flatMap(({ metric }) => {
    const { __name__: name = '', ...labels } = metric;
    const text = `${name}{${Object.keys(labels)
      .sort()
      .map((label) => `${label}="${labels[label]}"`)
      .join(',')}} 1 0`;
    const groups = pattern.exec(text)?.groups;
    return groups?.value === undefined ? [] : [{ value: groups.value, text: groups.text ?? groups.value }];
  });
}
