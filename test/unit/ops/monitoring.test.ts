import { spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { openDatabase } from '../../../src/db/open.js';
import { createMetrics } from '../../../src/ops/metrics.js';
import { registerDbGauges } from '../../../src/ops/metrics-db.js';

/*
 * The operator kit in monitoring/: the Grafana dashboard and the Prometheus alert rules with their
 * promtool unit tests. promtool (Debian's prometheus package; .ci/run installs it) checks the
 * rules. Without it the rules get a structural check in JS and a warning, unless CI is set: then
 * a missing promtool fails.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const ALERTS = 'monitoring/alerts.yml';
const ALERT_TESTS = 'monitoring/alerts.test.yml';
const DASHBOARD = 'monitoring/grafana-dashboard.json';

/** Labels Prometheus attaches to every scraped series. */
const TARGET_LABELS = ['job', 'instance'];
/** Words of PromQL that are not metric names (functions and aggregations are followed by "("). */
const KEYWORDS = new Set(['and', 'or', 'unless', 'offset', 'bool', 'inf', 'nan']);
const GROUPING = /\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g;
const SEVERITIES = new Set(['critical', 'warning', 'info']);

interface Rule {
  alert?: unknown;
  record?: unknown;
  expr?: unknown;
  for?: unknown;
  labels?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}
interface RuleFile {
  groups?: { name?: unknown; rules?: Rule[] }[];
}
interface AlertTestFile {
  rule_files?: unknown;
  tests?: {
    name?: unknown;
    input_series?: { series?: unknown; values?: unknown }[];
    alert_rule_test?: { eval_time?: unknown; alertname?: unknown; exp_alerts?: unknown }[];
  }[];
}
interface Panel {
  id?: number;
  type?: string;
  title?: string;
  datasource?: { type?: string; uid?: string };
  targets?: { expr?: string; datasource?: { type?: string; uid?: string } }[];
  panels?: Panel[];
}
interface Dashboard {
  __inputs?: { name?: string; type?: string; pluginId?: string }[];
  panels?: Panel[];
  templating?: { list?: { name?: string; query?: string | { query?: string } }[] };
}

/** One metric name as it appears in PromQL, with the labels its series may carry. */
interface Registered {
  labels: Set<string>;
  /** Label values seen in a scrape of a fresh registry (zero-initialised series and gauges). */
  values: Map<string, Set<string>>;
}

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

function findOnPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

const PROMTOOL = findOnPath('promtool');
const CI = process.env.CI;
const IS_CI = CI !== undefined && CI !== '' && CI !== 'false' && CI !== '0';

/**
 * Every metric name our code registers, by creating the registries the daemon creates: the hooks'
 * counters and histograms with the default process metrics, and the gauges read from the
 * database. Histograms expose _bucket, _sum and _count.
 */
async function registeredMetrics(): Promise<Map<string, Registered>> {
  const db = await openDatabase({ location: ':memory:' });
  try {
    const { registry } = createMetrics();
    registerDbGauges({ registry, db, hasWebhooks: true });
    const seen = new Map<string, Map<string, Set<string>>>();
    for (const metric of await registry.getMetricsAsJSON()) {
      const values = new Map<string, Set<string>>();
      for (const sample of metric.values) {
        for (const [label, value] of Object.entries(sample.labels)) {
          if (!values.has(label)) values.set(label, new Set());
          values.get(label)?.add(String(value));
        }
      }
      seen.set(metric.name, values);
    }
    const names = new Map<string, Registered>();
    for (const metric of registry.getMetricsAsArray()) {
      // prom-client's typings give `type` as a numeric enum; at run time it is the type's name.
      const { name, type, labelNames } = metric as unknown as {
        name: string;
        type: string;
        labelNames?: readonly string[];
      };
      const labels = new Set([...(labelNames ?? []), ...TARGET_LABELS]);
      const values = seen.get(name) ?? new Map<string, Set<string>>();
      if (type === 'histogram' || type === 'summary') {
        const extra = type === 'histogram' ? `${name}_bucket` : name;
        names.set(extra, {
          labels: new Set([...labels, type === 'histogram' ? 'le' : 'quantile']),
          values,
        });
        names.set(`${name}_sum`, { labels, values });
        names.set(`${name}_count`, { labels, values });
      } else {
        names.set(name, { labels, values });
      }
    }
    return names;
  } finally {
    await db.close();
  }
}

/** PromQL with its string literals emptied: what remains can be scanned for names. */
const withoutStrings = (expr: string) =>
  expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""').replace(/#.*$/gm, '');

/** The metric names a PromQL expression reads (a scan, not a parser: enough for our queries). */
function metricNames(expr: string): string[] {
  const bare = withoutStrings(expr)
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(GROUPING, ' ');
  const names = new Set<string>();
  for (const match of bare.matchAll(/(?<![\w.:$])[a-zA-Z_:][\w:]*(?!\s*\()/g)) {
    // The lookahead above backtracks into a name followed by "(": keep whole words only.
    const end = (match.index ?? 0) + match[0].length;
    if (/^[\w:]/.test(bare.slice(end))) continue;
    if (!KEYWORDS.has(match[0])) names.add(match[0]);
  }
  return [...names];
}

/** The label matchers written right after a metric name: `name{label="value", ...}`. */
function selectors(expr: string): { metric: string; label: string; op: string; value: string }[] {
  const found = [];
  for (const selector of expr.matchAll(/([a-zA-Z_:][\w:]*)\s*\{([^}]*)\}/g)) {
    const [, metric = '', body = ''] = selector;
    for (const matcher of body.matchAll(/([a-zA-Z_]\w*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g)) {
      const [, label = '', op = '', value = ''] = matcher;
      found.push({ metric, label, op, value });
    }
  }
  return found;
}

/** Every non-row panel, rows' nested panels included. */
function flatPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((panel) =>
    panel.type === 'row' ? flatPanels(panel.panels ?? []) : [panel],
  );
}

function dashboardExprs(dashboard: Dashboard): { where: string; expr: string }[] {
  return flatPanels(dashboard.panels ?? []).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      where: `dashboard panel "${panel.title}"`,
      expr: target.expr ?? '',
    })),
  );
}

function alertRules(file: RuleFile): Rule[] {
  return (file.groups ?? []).flatMap((group) => group.rules ?? []);
}

function ruleExprs(file: RuleFile): { where: string; expr: string }[] {
  return alertRules(file).map((rule) => ({
    where: `alert ${String(rule.alert ?? rule.record)}`,
    expr: String(rule.expr ?? ''),
  }));
}

/** Result values the webhook code counts: the receiver's refusals and the applier's outcomes. */
function webhookResultLiterals(): Set<string> {
  const files = [
    ...readdirSync(join(ROOT, 'src/webhooks'))
      .filter((name) => name.endsWith('.ts'))
      .map((name) => `src/webhooks/${name}`),
    'src/db/store/request-store.ts',
  ];
  const literals = new Set<string>();
  for (const file of files)
    for (const match of read(file).matchAll(/'([a-z_]+)'/g)) literals.add(match[1] ?? '');
  return literals;
}

/** The values a matcher admits, when it is a plain value or an alternation of plain values. */
function matcherValues(op: string, value: string): string[] {
  if (op === '=' || op === '!=') return [value];
  return /^[\w+-]+(?:\|[\w+-]+)*$/.test(value) ? value.split('|') : [];
}

const isDuration = (value: unknown) =>
  typeof value === 'string' && /^(?:\d+(?:ms|s|m|h|d|w|y))+$/.test(value);

/** What promtool would refuse outright, checked in JS: shape, durations, balanced brackets. */
function checkRulesInJs(rules: RuleFile, tests: AlertTestFile): void {
  const names = new Set<string>();
  for (const group of rules.groups ?? []) {
    expect(typeof group.name, 'every group has a name').toBe('string');
    for (const rule of group.rules ?? []) {
      const expr = String(rule.expr ?? '');
      const bare = withoutStrings(expr);
      for (const [open, close] of [
        ['(', ')'],
        ['[', ']'],
        ['{', '}'],
      ] as const)
        expect(bare.split(open).length, `${String(rule.alert)}: balanced ${open}${close}`).toBe(
          bare.split(close).length,
        );
      if (rule.for !== undefined) expect(isDuration(rule.for), String(rule.alert)).toBe(true);
      names.add(String(rule.alert));
    }
  }
  expect(tests.rule_files).toEqual(['alerts.yml']);
  for (const test of tests.tests ?? []) {
    expect(test.input_series?.length, String(test.name)).toBeGreaterThan(0);
    for (const series of test.input_series ?? []) {
      expect(metricNames(String(series.series)).length, String(series.series)).toBe(1);
      expect(typeof series.values).toBe('string');
    }
    for (const check of test.alert_rule_test ?? []) {
      expect(names, String(test.name)).toContain(check.alertname);
      expect(isDuration(check.eval_time), String(test.name)).toBe(true);
    }
  }
}

let registered: Map<string, Registered>;
let dashboard: Dashboard;
let rules: RuleFile;
let alertTests: AlertTestFile;

beforeAll(async () => {
  registered = await registeredMetrics();
  dashboard = JSON.parse(read(DASHBOARD)) as Dashboard;
  rules = parse(read(ALERTS)) as RuleFile;
  alertTests = parse(read(ALERT_TESTS)) as AlertTestFile;
});

describe('the PromQL scan', () => {
  it('finds the metric names of an expression, and only those', () => {
    expect(
      metricNames(
        'histogram_quantile(0.95, sum by (endpoint, le) (rate(a_bucket{endpoint="x"}[5m]))) ' +
          '/ on (job) group_left (mode) b == 1 unless c offset 10m or time() - d_seconds',
      ).sort(),
    ).toEqual(['a_bucket', 'b', 'c', 'd_seconds']);
    expect(selectors('x_total{result="forbidden", instance=~"$instance"}')).toEqual([
      { metric: 'x_total', label: 'result', op: '=', value: 'forbidden' },
      { metric: 'x_total', label: 'instance', op: '=~', value: '$instance' },
    ]);
  });

  it('knows the registered names, histogram suffixes included, and no others', () => {
    for (const name of [
      'transport_sync_cycles_total',
      'transport_sync_cycle_duration_seconds_bucket',
      'transport_sync_service_call_duration_seconds_count',
      'transport_sync_mode',
      'transport_sync_outbox_rows',
      'process_resident_memory_bytes',
    ])
      expect(registered.has(name), name).toBe(true);
    expect(registered.has('transport_sync_cycle_duration_seconds')).toBe(false);
    expect(registered.has('transport_sync_nope_total')).toBe(false);
  });
});

describe('the Grafana dashboard', () => {
  it('parses, takes its Prometheus data source as the DS_PROMETHEUS input, and every panel queries it', () => {
    expect(dashboard.__inputs).toContainEqual(
      expect.objectContaining({
        name: 'DS_PROMETHEUS',
        type: 'datasource',
        pluginId: 'prometheus',
      }),
    );
    const panels = flatPanels(dashboard.panels ?? []);
    expect(panels.length).toBeGreaterThan(10);
    const ids = (dashboard.panels ?? []).flatMap((panel) => [
      panel.id,
      ...(panel.panels ?? []).map((nested) => nested.id),
    ]);
    expect(new Set(ids).size, 'panel ids are unique').toBe(ids.length);
    for (const panel of panels) {
      expect(panel.targets?.length, `panel "${panel.title}" has targets`).toBeGreaterThan(0);
      expect(panel.datasource?.uid, String(panel.title)).toBe('${DS_PROMETHEUS}');
      for (const target of panel.targets ?? []) {
        expect(target.expr?.trim(), `panel "${panel.title}" has an expression`).toBeTruthy();
        expect(target.datasource?.uid, String(panel.title)).toBe('${DS_PROMETHEUS}');
      }
    }
  });

  it('has panels for each area the operator watches', () => {
    const exprs = dashboardExprs(dashboard)
      .map(({ expr }) => expr)
      .join('\n');
    for (const name of [
      'transport_sync_mode',
      'transport_sync_freshness_seconds',
      'transport_sync_cycles_total',
      'transport_sync_cycle_duration_seconds_bucket',
      'transport_sync_service_calls_total',
      'transport_sync_service_call_duration_seconds_bucket',
      'transport_sync_retries_total',
      'transport_sync_rate_limited_seconds_total',
      'transport_sync_webhook_events_total',
      'transport_sync_intake_gaps_unreviewed',
      'transport_sync_webhook_silent',
      'transport_sync_outbox_rows',
      'transport_sync_quarantined_records',
      'transport_sync_schema_drift',
      'transport_sync_requests',
      'transport_sync_feed_lag_seconds',
      'transport_sync_feed_lag_changes',
    ])
      expect(exprs, name).toMatch(new RegExp(`\\b${name}\\b`));
    expect(exprs).toContain('forbidden|unauthorized');
  });
});

describe('the alert rules', () => {
  it('each name an alert, an expression, for, a severity, a summary and a description', () => {
    const all = alertRules(rules);
    expect(all.length).toBeGreaterThan(0);
    for (const rule of all) {
      const name = String(rule.alert);
      expect(rule.alert, 'alert rules only').toMatch(/^TransportSync[A-Za-z]+$/);
      expect(typeof rule.expr === 'string' && rule.expr.trim() !== '', name).toBe(true);
      expect(isDuration(rule.for), `${name}: for`).toBe(true);
      expect(SEVERITIES, `${name}: severity`).toContain(rule.labels?.severity);
      expect(String(rule.annotations?.summary ?? '').trim(), `${name}: summary`).not.toBe('');
      expect(String(rule.annotations?.description ?? '').trim(), `${name}: description`).not.toBe(
        '',
      );
    }
    const names = all.map((rule) => rule.alert);
    expect(new Set(names).size, 'alert names are unique').toBe(names.length);
  });

  it('are each exercised by a promtool unit test', () => {
    const tested = new Set(
      (alertTests.tests ?? []).flatMap((test) =>
        (test.alert_rule_test ?? []).map((check) => check.alertname),
      ),
    );
    for (const rule of alertRules(rules)) expect(tested, String(rule.alert)).toContain(rule.alert);
  });
});

describe('the metrics the dashboard and the rules read', () => {
  it('are all registered by our code', () => {
    const exprs = [...dashboardExprs(dashboard), ...ruleExprs(rules)];
    const unknown: string[] = [];
    for (const { where, expr } of exprs) {
      const names = metricNames(expr);
      expect(names.length, `${where} reads a metric`).toBeGreaterThan(0);
      for (const name of names) if (!registered.has(name)) unknown.push(`${where}: ${name}`);
    }
    for (const variable of dashboard.templating?.list ?? []) {
      const query =
        typeof variable.query === 'string' ? variable.query : (variable.query?.query ?? '');
      const match = /^label_values\(\s*([a-zA-Z_:][\w:]*)\s*,\s*(\w+)\s*\)$/.exec(query);
      expect(match, `variable ${variable.name}: ${query}`).not.toBeNull();
      const [, metric = '', label = ''] = match ?? [];
      if (!registered.get(metric)?.labels.has(label))
        unknown.push(`variable ${variable.name}: ${metric} ${label}`);
    }
    expect(unknown).toEqual([]);
  });

  it('are matched on labels they carry, with values our code writes', () => {
    const results = webhookResultLiterals();
    const problems: string[] = [];
    for (const { where, expr } of [...dashboardExprs(dashboard), ...ruleExprs(rules)]) {
      for (const { metric, label, op, value } of selectors(expr)) {
        const known = registered.get(metric);
        if (!known) continue; // reported by the test above
        if (!known.labels.has(label)) {
          problems.push(`${where}: ${metric} has no label ${label}`);
          continue;
        }
        if (TARGET_LABELS.includes(label) || value.includes('$')) continue;
        const written =
          metric === 'transport_sync_webhook_events_total' && label === 'result'
            ? results
            : known.values.get(label);
        for (const one of matcherValues(op, value))
          if (!written?.has(one)) problems.push(`${where}: ${metric}{${label}="${one}"}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('promtool', () => {
  it.runIf(PROMTOOL !== undefined)('checks the rules', () => {
    const run = spawnSync(PROMTOOL ?? 'promtool', ['check', 'rules', ALERTS], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
  });

  it.runIf(PROMTOOL !== undefined)('passes the rules unit tests', () => {
    const run = spawnSync(PROMTOOL ?? 'promtool', ['test', 'rules', ALERT_TESTS], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
    expect(run.stdout).toContain('SUCCESS');
  });

  it.runIf(PROMTOOL === undefined && IS_CI)('is installed where CI is set', () => {
    expect(
      PROMTOOL,
      "promtool is missing and CI is set: install Debian's prometheus package " +
        '(apt-get install --no-install-recommends prometheus; .ci/run does it)',
    ).toBeDefined();
  });

  it.runIf(PROMTOOL === undefined && !IS_CI)(
    'is not on PATH: the rules get a structural check in JS instead',
    () => {
      console.warn(
        'WARNING: promtool not found on PATH, so `promtool check rules` and `promtool test rules` ' +
          `did NOT run on ${ALERTS}; only a structural check in JS did. Install Debian's ` +
          'prometheus package (apt-get install --no-install-recommends prometheus) for the full ' +
          'check. With CI set, a missing promtool fails this test.',
      );
      checkRulesInJs(rules, alertTests);
    },
  );
});
