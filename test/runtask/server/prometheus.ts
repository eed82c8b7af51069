/**
 * Reading an integrator's `/metrics` as Prometheus would: the text parsed by a text-format parser
 * (prom2javascript: it keeps the labels of labelled histograms, which parse-prometheus-text-format drops, and
 * throws on a line it cannot read), never by a regular expression of the test's own.
 */
import {
  getMetricsFromIterator,
  type PromData,
  type PromHistogramData,
  type PromMetric,
} from 'prom2javascript';

type Series = PromData | PromHistogramData;

/** A scrape: the families by name, with lookups by labels. */
export class Scrape {
  constructor(readonly families: Readonly<Record<string, PromMetric>>) {}

  /** The family, which must be there. */
  family(name: string): PromMetric {
    const family = this.families[name];
    if (family === undefined) throw new Error(`no metric ${name} in the scrape`);
    return family;
  }

  /** The series whose labels include `labels`, all of them. */
  series(name: string, labels: Record<string, string> = {}): Series[] {
    return (this.family(name).data as Series[]).filter((s) =>
      Object.entries(labels).every(([key, value]) => s.labels[key] === value),
    );
  }

  /** A counter's or gauge's value, summed over the series matching `labels` (0 when none exists yet). */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.series(name, labels).reduce((sum, s) => sum + (s as PromData).value, 0);
  }

  /** A histogram's series matching `labels`, which must be exactly one. */
  histogram(name: string, labels: Record<string, string>): PromHistogramData {
    const [only, ...more] = this.series(name, labels);
    if (only === undefined || more.length > 0) throw new Error(`not one ${name} series with those labels`);
    return only as PromHistogramData;
  }

  /** A histogram's observation count over the series matching `labels` (0 when none exists yet). */
  count(name: string, labels: Record<string, string> = {}): number {
    return this.series(name, labels).reduce((sum, s) => sum + (s as PromHistogramData).count, 0);
  }

  /** Every label value of every series. */
  labelValues(): string[] {
    return Object.values(this.families).flatMap((f) =>
      (f.data as Series[]).flatMap((s) => Object.values(s.labels)),
    );
  }
}

/** GETs `/metrics` of the integrator at `base` and parses it. */
export async function scrape(base: string): Promise<{ scrape: Scrape; contentType: string | null }> {
  const response = await fetch(new URL('/metrics', base));
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}`);
  const text = await response.text();
  const families = await getMetricsFromIterator(text.split('\n')[Symbol.iterator]());
  return { scrape: new Scrape(families), contentType: response.headers.get('content-type') };
}
