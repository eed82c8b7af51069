/**
 * `runtask send --report <file>`: the task result as a self-contained HTML page, laid out as the run page shows
 * a run task (status, message, link, the outcomes list with their Severity/Status and other tags coloured by
 * level, each outcome opening to its Markdown body), with the session's timeline under it.
 *
 * A handler's output is untrusted, so the page is safe to open whatever it says: Markdown is rendered by marked
 * and the HTML it makes is sanitised by sanitize-html (an allow-list of text tags; links to http(s) and mailto
 * only, opened with rel="noopener noreferrer"; no images, scripts, styles, forms or frames); every other text
 * is escaped; and the page's Content-Security-Policy allows no script and no network load at all, so even
 * markup that slipped through could neither run nor fetch. Outcomes open and close with `<details>`, without
 * script. Levels (run-tasks.md §4.3): none, info, warning, error, each with a colour, an icon and its name.
 */
import { Chalk } from 'chalk';
import { marked } from 'marked';
import sanitizeHtml from 'sanitize-html';
import type { Outcome, OutcomeTag, TagLevel } from '../../terraform/runtask/result.js';
import { timelineLines } from './render.js';
import type { SessionRecord } from './session.js';
import type { Verdict, WindowTexts } from './verdict.js';

const LEVEL_ICON: Record<TagLevel, string> = { error: '✖', warning: '▲', info: 'ℹ', none: '•' };

const STATUS_ICON: Record<string, string> = {
  passed: '✔',
  failed: '✖',
  errored: '✖',
  unreachable: '✖',
  running: '⟳',
  pending: '…',
  verified: '✔',
  refused: '✖',
};

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'br', 'hr', 'blockquote', 'pre', 'code', 'span'],
    ...['ul', 'ol', 'li', 'strong', 'em', 'del', 'a', 'table', 'thead', 'tbody', 'tr', 'th', 'td'],
  ],
  // rel and target are set on every link by transformTags below (a handler's own values are overwritten).
  allowedAttributes: { a: ['href', 'title', 'rel', 'target'], th: ['align'], td: ['align'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  transformTags: {
    a: sanitizeHtml.simpleTransform('a', { rel: 'noopener noreferrer', target: '_blank' }),
  },
};

/** Markdown (untrusted) as safe HTML. */
export function renderMarkdown(markdown: string): string {
  const html = marked.parse(markdown, { async: false, gfm: true });
  return sanitizeHtml(html, SANITIZE);
}

function tag(label: OutcomeTag): string {
  const level = label.level ?? 'none';
  return (
    `<span class="tag level-${level}" data-level="${level}" title="level: ${level}">` +
    `<span class="icon" aria-hidden="true">${LEVEL_ICON[level]}</span> ${escapeHtml(label.label)}` +
    `<span class="level-name"> (${level})</span></span>`
  );
}

/** Severity and Status first (the platform enriches them), then the other headers in their order. */
function tagGroups(tags: Outcome['tags']): string {
  if (tags === undefined) return '';
  const keys = Object.keys(tags);
  const special = ['severity', 'status'];
  const ordered = [
    ...special.flatMap((s) => keys.filter((k) => k.toLowerCase() === s)),
    ...keys.filter((k) => !special.includes(k.toLowerCase())),
  ];
  return ordered
    .map(
      (key) =>
        `<span class="tag-group" data-tag="${escapeHtml(key)}"><span class="tag-key">${escapeHtml(key)}</span>` +
        (tags[key] ?? []).map(tag).join('') +
        '</span>',
    )
    .join('');
}

function outcome(item: Outcome, index: number): string {
  const body = item.body === undefined ? '<p class="empty">No details.</p>' : renderMarkdown(item.body);
  const link =
    item.url === undefined
      ? ''
      : `<p class="outcome-link"><a href="${escapeHtml(item.url)}" rel="noopener noreferrer" target="_blank">View details</a></p>`;
  return (
    `<details class="outcome" id="outcome-${index}" data-outcome-id="${escapeHtml(item.id)}">` +
    `<summary><span class="outcome-id">${escapeHtml(item.id)}</span>` +
    `<span class="description">${escapeHtml(item.description)}</span>` +
    `<span class="tags">${tagGroups(item.tags)}</span></summary>` +
    `<div class="body">${body}${link}</div></details>`
  );
}

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f6f7f9;color:#1f2328}
main{max-width:960px;margin:24px auto;padding:0 16px}
h1{font-size:20px;margin:0 0 4px} .meta{color:#57606a;font-size:13px;margin-bottom:16px}
.card{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:16px;margin-bottom:16px}
.status{display:inline-block;font-weight:600;padding:2px 10px;border-radius:12px;color:#fff}
.status-passed,.status-verified{background:#1a7f37}.status-failed,.status-errored,.status-unreachable,.status-refused{background:#cf222e}
.status-running,.status-pending{background:#9a6700}
.message{margin:8px 0 0}.outcomes-title{font-size:16px;margin:0 0 8px}
details.outcome{border-top:1px solid #d0d7de;padding:8px 0}
details.outcome summary{cursor:pointer;display:flex;flex-wrap:wrap;gap:8px;align-items:baseline}
.outcome-id{font-family:ui-monospace,monospace;font-size:12px;color:#57606a}.description{flex:1 1 300px}
.tag-group{display:inline-flex;gap:4px;align-items:center;margin-right:8px}.tag-key{font-size:12px;color:#57606a}
.tag{font-size:12px;padding:1px 8px;border-radius:10px;border:1px solid}
.level-error{background:#ffebe9;border-color:#cf222e;color:#a40e26}
.level-warning{background:#fff8c5;border-color:#bf8700;color:#7d4e00}
.level-info{background:#ddf4ff;border-color:#0969da;color:#0550ae}
.level-none{background:#f6f8fa;border-color:#afb8c1;color:#57606a}
.level-name{position:absolute;left:-9999px}
.body{padding:8px 0 0 16px}.body pre{background:#f6f8fa;padding:8px;overflow:auto}
.body table{border-collapse:collapse}.body td,.body th{border:1px solid #d0d7de;padding:4px 8px}
ol.timeline{font-family:ui-monospace,monospace;font-size:12px;white-space:pre-wrap;padding-left:0;list-style:none}
`;

/** An outcome with every text passed through `redact` (before any escaping or rendering changes it). */
function redactOutcome(item: Outcome, redact: (text: string) => string): Outcome {
  const tags =
    item.tags === undefined
      ? undefined
      : Object.fromEntries(
          Object.entries(item.tags).map(([key, labels]) => [
            redact(key),
            labels.map((label) => ({ ...label, label: redact(label.label) })),
          ]),
        );
  return {
    id: redact(item.id),
    description: redact(item.description),
    ...(item.body === undefined ? {} : { body: redact(item.body) }),
    ...(item.url === undefined ? {} : { url: redact(item.url) }),
    ...(tags === undefined ? {} : { tags }),
  };
}

/**
 * The page of one session's task result. `redact` hides the run's secrets (the HMAC key, the token) in every
 * text the integrator sent, before it is escaped or rendered (an escaped or Markdown-rendered secret would no
 * longer be found by a pass over the finished page).
 */
export function previewPage(
  record: SessionRecord,
  verdict: Verdict,
  windows: WindowTexts,
  redact: (text: string) => string = (text) => text,
): string {
  const color = new Chalk({ level: 0 });
  record = {
    ...record,
    taskMessage: record.taskMessage === undefined ? undefined : redact(record.taskMessage),
    taskUrl: record.taskUrl === undefined ? undefined : redact(record.taskUrl),
    outcomes: record.outcomes.map((item) => redactOutcome(item, redact)),
  };
  const timeline = record.events
    .flatMap((event) => timelineLines(event, record.startedAt, windows, color))
    .map((line) => `<li>${escapeHtml(redact(line))}</li>`)
    .join('');
  const status = verdict.result;
  const issued = record.issued;
  const outcomes = record.outcomes.map(outcome).join('');
  const link =
    record.taskUrl === undefined
      ? ''
      : `<p><a href="${escapeHtml(record.taskUrl)}" rel="noopener noreferrer" target="_blank">Details</a></p>`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Run task ${escapeHtml(status)}: ${escapeHtml(issued.taskResultId)}</title>
<style>${STYLE}</style></head>
<body><main>
<h1>Run task result</h1>
<div class="meta">task result ${escapeHtml(issued.taskResultId)} · ${escapeHtml(issued.stage)} · ${escapeHtml(issued.enforcement)} · outcomes ${issued.outcomesOffered ? 'offered' : 'not offered'} · preview by provider runtask send</div>
<section class="card" id="result">
<span class="status status-${escapeHtml(status)}" data-status="${escapeHtml(status)}">${STATUS_ICON[status] ?? '•'} ${escapeHtml(status)}</span>
<p class="message">${escapeHtml(record.taskMessage ?? '')}</p>${link}
</section>
<section class="card" id="outcomes"><h2 class="outcomes-title">Outcomes (${record.outcomes.length})</h2>${outcomes || '<p class="empty">No outcomes were reported.</p>'}</section>
<section class="card" id="timeline"><h2 class="outcomes-title">Timeline</h2><ol class="timeline">${timeline}</ol>
<p>${escapeHtml(verdict.summary)}</p></section>
</main></body></html>
`;
}
