/**
 * Issue 36, webhooks: what an endpoint receives, without a network. The events of a completed
 * analysis (analysis.completed, observable.verdict at each endpoint's min_verdict), the TLP cut
 * (max_tlp), secrets masked, and the Slack and Teams bodies checked against the shapes their
 * documentation gives (Slack's incoming webhooks take `{ text, blocks }` in Block Kit, within its
 * limits; a Teams Workflows webhook takes a message with one Adaptive Card), with text from
 * outside never interpreted (no Slack mrkdwn link or mention, no Teams markdown).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Ajv } from 'ajv';
import { atLeast, completedEvent, verdictEvents } from '../src/automation/analysis-events.js';
import { defang } from '../src/automation/chat-text.js';
import { WEBHOOK_EVENTS, type OasEvent } from '../src/automation/events.js';
import { resultsLink } from '../src/automation/links.js';
import { forTlp, renderBody, scrub } from '../src/automation/render.js';
import { escapeMrkdwn } from '../src/automation/slack.js';
import { WEBHOOK_EVENT_NAMES } from '../src/config/schema.js';
import { loadEngineDefinitions, Catalog } from '../src/engine/catalog.js';
import type { AnalysisHeader, ResultRow, StoredResult } from '../src/store/analysis-store.js';
import { verdictText } from '../src/verdict/verdict.js';

const ID = '0550e6e2-380a-4f79-ba26-241d571ade2b';
const HOSTILE = '<!channel> *bold* _it_ `code` <https://evil.example|click here> & [link](https://evil.example) **md**';

function header(overrides: Partial<AnalysisHeader> = {}): AnalysisHeader {
  return {
    id: ID,
    origin: 'server',
    started_by: 'alice',
    created_at: '2026-11-27T09:15:40.000Z',
    finished_at: '2026-11-27T09:15:42.500Z',
    duration_ms: 2500,
    engines: ['provider_13', 'reverse_dns'],
    ignore_cache: false,
    tlp: 'AMBER',
    pap: 'GREEN',
    observables: [
      { value: '8.8.8.8', type: 'IPv4' },
      { value: 'https://evil.example/login', type: 'URL', found_in: ['mail.eml: body link'] },
      { value: 'evil.example', type: 'FQDN' },
    ],
    complete: true,
    progress: { done: 6, total: 6 },
    format: 2,
    verdicts: { malicious: 1, suspicious: 1, clean: 0, unknown: 1, worst: 'malicious' },
    ...overrides,
  };
}

/** Rows as the store gives them: each result with its stored verdict. */
async function* rows(): AsyncGenerator<StoredResult[]> {
  const page: ResultRow[] = [
    { idx: 0, value: JSON.stringify({ observable: '8.8.8.8', type: 'IPv4', reversed_success: false }), verdict: verdictText({ verdict: 'unknown', reasons: [] }) },
    { idx: 1, value: JSON.stringify({ observable: 'https://evil.example/login', type: 'URL', found_in: ['mail.eml: body link'], reversed_success: false }), verdict: verdictText({ verdict: 'malicious', reasons: [`phishtank: ${HOSTILE}`] }) },
    { idx: 2, value: JSON.stringify({ observable: 'evil.example', type: 'FQDN', reversed_success: false }), verdict: verdictText({ verdict: 'suspicious', reasons: ['urlscan: seen 3 times'] }) },
  ];
  yield page;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

let catalog: Catalog;
async function theCatalog(): Promise<Catalog> {
  catalog ??= new Catalog(await loadEngineDefinitions(), 'main', {});
  return catalog;
}

// Slack Block Kit, as https://api.slack.com/reference/block-kit/blocks documents the blocks used
// (header, section, context, actions with a button) and their limits.
const slackText = (max: number, types = ['plain_text', 'mrkdwn']) => ({
  type: 'object', required: ['type', 'text'], additionalProperties: false,
  properties: { type: { enum: types }, text: { type: 'string', minLength: 1, maxLength: max }, emoji: { type: 'boolean' }, verbatim: { type: 'boolean' } },
});
const SLACK_MESSAGE = {
  type: 'object', required: ['text', 'blocks'], additionalProperties: false,
  properties: {
    text: { type: 'string', minLength: 1, maxLength: 40000 },
    blocks: {
      type: 'array', minItems: 1, maxItems: 50,
      items: {
        oneOf: [
          { type: 'object', required: ['type', 'text'], additionalProperties: false, properties: { type: { const: 'header' }, text: slackText(150, ['plain_text']) } },
          {
            type: 'object', required: ['type'], additionalProperties: false, anyOf: [{ required: ['text'] }, { required: ['fields'] }],
            properties: { type: { const: 'section' }, text: slackText(3000), fields: { type: 'array', minItems: 1, maxItems: 10, items: slackText(2000) } },
          },
          { type: 'object', required: ['type', 'elements'], additionalProperties: false, properties: { type: { const: 'context' }, elements: { type: 'array', minItems: 1, maxItems: 10, items: slackText(2000) } } },
          {
            type: 'object', required: ['type', 'elements'], additionalProperties: false,
            properties: {
              type: { const: 'actions' },
              elements: { type: 'array', minItems: 1, maxItems: 25, items: { type: 'object', required: ['type', 'text'], additionalProperties: false, properties: { type: { const: 'button' }, text: slackText(75, ['plain_text']), url: { type: 'string', pattern: '^https?://', maxLength: 3000 } } } },
            },
          },
        ],
      },
    },
  },
};

// A Teams Workflows webhook's message: one Adaptive Card attachment
// (https://learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using),
// its elements as https://adaptivecards.io/explorer/ gives them.
const TEAMS_MESSAGE = {
  type: 'object', required: ['type', 'attachments'], additionalProperties: false,
  properties: {
    type: { const: 'message' },
    attachments: {
      type: 'array', minItems: 1, maxItems: 1,
      items: {
        type: 'object', required: ['contentType', 'content'], additionalProperties: false,
        properties: {
          contentType: { const: 'application/vnd.microsoft.card.adaptive' },
          contentUrl: { type: 'null' },
          content: {
            type: 'object', required: ['type', 'version', 'body'], additionalProperties: false,
            properties: {
              $schema: { const: 'http://adaptivecards.io/schemas/adaptive-card.json' },
              type: { const: 'AdaptiveCard' },
              version: { enum: ['1.2', '1.3', '1.4', '1.5'] },
              body: {
                type: 'array', minItems: 1,
                items: {
                  oneOf: [
                    { type: 'object', required: ['type', 'text'], additionalProperties: false, properties: { type: { const: 'TextBlock' }, text: { type: 'string' }, weight: { enum: ['Default', 'Lighter', 'Bolder'] }, size: { enum: ['Default', 'Small', 'Medium', 'Large', 'ExtraLarge'] }, wrap: { type: 'boolean' } } },
                    { type: 'object', required: ['type', 'facts'], additionalProperties: false, properties: { type: { const: 'FactSet' }, facts: { type: 'array', items: { type: 'object', required: ['title', 'value'], additionalProperties: false, properties: { title: { type: 'string' }, value: { type: 'string' } } } } } },
                    { type: 'object', required: ['type', 'inlines'], additionalProperties: false, properties: { type: { const: 'RichTextBlock' }, separator: { type: 'boolean' }, inlines: { type: 'array', minItems: 1, items: { type: 'object', required: ['type', 'text'], additionalProperties: false, properties: { type: { const: 'TextRun' }, text: { type: 'string' } } } } } },
                  ],
                },
              },
              actions: { type: 'array', items: { type: 'object', required: ['type', 'url'], additionalProperties: false, properties: { type: { const: 'Action.OpenUrl' }, title: { type: 'string' }, url: { type: 'string', pattern: '^https?://' } } } },
            },
          },
        },
      },
    },
  },
};

const ajv = new Ajv({ allErrors: true });
const slackValid = ajv.compile(SLACK_MESSAGE);
const teamsValid = ajv.compile(TEAMS_MESSAGE);

/** Every mrkdwn text of a Slack message (and its fallback `text`, which notifications read as mrkdwn). */
function slackMrkdwn(message: { text: string; blocks: Record<string, unknown>[] }): string[] {
  const texts = [message.text];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      const object = value as Record<string, unknown>;
      if (object['type'] === 'mrkdwn' && typeof object['text'] === 'string') texts.push(object['text']);
      Object.values(object).forEach(walk);
    }
  };
  walk(message.blocks);
  return texts;
}

/** Every string of the card that Teams reads as markdown: TextBlock texts and facts. */
function teamsMarkdown(card: Record<string, unknown>): string[] {
  const body = card['body'] as Record<string, unknown>[];
  return body.flatMap((element) => (element['type'] === 'TextBlock' ? [String(element['text'])]
    : element['type'] === 'FactSet' ? (element['facts'] as { title: string; value: string }[]).flatMap((f) => [f.title, f.value]) : []));
}

async function eventsOf(h: AnalysisHeader, link: string): Promise<OasEvent[]> {
  return [completedEvent(h, link), ...(await collect(verdictEvents(h, rows(), 'unknown', await theCatalog(), link))).map((v) => v.event)];
}

describe('webhook events', () => {
  test('the settings list the events src/automation/events.ts delivers', () => {
    assert.deepEqual([...WEBHOOK_EVENT_NAMES], [...WEBHOOK_EVENTS]);
  });

  test('analysis.completed: id, link, who, engines, counts, worst verdict, marking, times', () => {
    const event = completedEvent(header(), resultsLink('https://oas.example.org/', ID));
    assert.equal(event.type, 'analysis.completed');
    assert.equal(event.timestamp, '2026-11-27T09:15:42.500Z');
    assert.deepEqual(event.analysis, { id: ID, tlp: 'AMBER' });
    assert.deepEqual(event.data, {
      analysis_id: ID,
      link: `https://oas.example.org/results/${ID}`,
      started_by: 'alice',
      engines: ['provider_13', 'reverse_dns'],
      observables: 3,
      verdicts: { malicious: 1, suspicious: 1, clean: 0, unknown: 1 },
      worst_verdict: 'malicious',
      tlp: 'AMBER',
      pap: 'GREEN',
      created_at: '2026-11-27T09:15:40.000Z',
      finished_at: '2026-11-27T09:15:42.500Z',
      duration_ms: 2500,
    });
    assert.equal(resultsLink('', ID), `/results/${ID}`, 'without public_url, a path');
  });

  test('observable.verdict: one per observable at least as severe as the threshold, with its reasons and found_in', async () => {
    const verdicts = await collect(verdictEvents(header(), rows(), 'suspicious', await theCatalog(), `/results/${ID}`));
    assert.deepEqual(verdicts.map((v) => [v.index, v.verdict]), [[1, 'malicious'], [2, 'suspicious']]);
    assert.deepEqual(verdicts[0]!.event.data, {
      analysis_id: ID, link: `/results/${ID}`, observable: 'https://evil.example/login', type: 'URL', verdict: 'malicious',
      reasons: [`phishtank: ${HOSTILE}`], found_in: ['mail.eml: body link'],
    });
    assert.ok(!('found_in' in verdicts[1]!.event.data), 'no found_in for a pasted observable');
    assert.equal((await collect(verdictEvents(header(), rows(), 'malicious', await theCatalog(), ''))).length, 1);
    assert.equal((await collect(verdictEvents(header(), rows(), 'unknown', await theCatalog(), ''))).length, 3);
    assert.ok(atLeast('malicious', 'suspicious') && !atLeast('clean', 'suspicious') && atLeast('unknown', 'unknown'));
  });

  test('max_tlp: above it, an endpoint gets only the analysis id and link', () => {
    const red = completedEvent(header({ tlp: 'RED' }), `/results/${ID}`);
    assert.deepEqual(forTlp(red, 'AMBER', 'AMBER').data, { analysis_id: ID, link: `/results/${ID}` });
    assert.deepEqual(forTlp(red, 'RED', 'AMBER'), red);
    const amberStrict = completedEvent(header({ tlp: 'AMBER+STRICT' }), '/x');
    assert.deepEqual(Object.keys(forTlp(amberStrict, 'AMBER', 'AMBER').data), ['analysis_id', 'link']);
    assert.deepEqual(forTlp(amberStrict, 'TLP:amber+strict', 'AMBER'), amberStrict);
    // An analysis of an older version has no TLP: the configuration's default_tlp stands for it.
    const unmarked = completedEvent(header({ tlp: undefined }), '/x');
    assert.deepEqual(Object.keys(forTlp(unmarked, 'GREEN', 'AMBER').data), ['analysis_id', 'link']);
    assert.deepEqual(forTlp(unmarked, 'AMBER', 'AMBER'), unmarked);
    const ping: OasEvent = { type: 'ping', timestamp: 'now', data: { message: 'x' } };
    assert.deepEqual(forTlp(ping, 'CLEAR', 'RED'), ping, 'an event about no analysis is never cut');
    for (const format of ['standard', 'slack', 'teams'] as const) {
      const body = renderBody(format, forTlp(red, 'CLEAR', 'AMBER'));
      for (const detail of ['alice', 'provider_13', 'malicious']) assert.ok(!body.includes(detail), `${format}: ${detail} withheld`);
      assert.ok(body.includes(ID), `${format}: the id stays`);
    }
  });

  test('every known secret is masked in what is sent', () => {
    const event = completedEvent(header({ started_by: 'user-OASSECRET-token-1234' }), '/x');
    const masked = scrub(event, ['OASSECRET-token-1234']);
    assert.equal(masked.data['started_by'], 'user-***');
    assert.ok(!renderBody('standard', masked).includes('OASSECRET'));
  });

  test('standard: the Standard Webhooks body { type, timestamp, data }', () => {
    const event = completedEvent(header(), '/x');
    assert.deepEqual(JSON.parse(renderBody('standard', event)), { type: event.type, timestamp: event.timestamp, data: event.data });
  });
});

describe('Slack and Teams bodies', () => {
  test('every event, withheld or not, with and without public_url, has the documented shape', async () => {
    const watch: OasEvent = { type: 'watchlist.changed', timestamp: '2026-11-27T10:00:00Z', analysis: { id: ID, tlp: 'GREEN' }, data: { watchlist: 'c2-hosts', analysis_id: ID, link: '/x', changes: [{ observable: 'evil.example', before: { verdict: 'clean' }, after: { verdict: 'malicious', reasons: [HOSTILE] } }] } };
    const ping: OasEvent = { type: 'ping', timestamp: '2026-11-27T10:00:00Z', data: { message: 'test' } };
    let checked = 0;
    for (const link of [`https://oas.example.org/results/${ID}`, `/results/${ID}`]) {
      for (const event of [...(await eventsOf(header(), link)), watch, ping]) {
        for (const shown of [event, forTlp({ ...event, analysis: event.analysis ? { id: ID, tlp: 'RED' } : undefined } as OasEvent, 'AMBER', 'AMBER')]) {
          const slack = JSON.parse(renderBody('slack', shown)) as { text: string; blocks: Record<string, unknown>[] };
          assert.ok(slackValid(slack), `slack ${shown.type}: ${ajv.errorsText(slackValid.errors)}`);
          const teams = JSON.parse(renderBody('teams', shown)) as Record<string, unknown>;
          assert.ok(teamsValid(teams), `teams ${shown.type}: ${ajv.errorsText(teamsValid.errors)}`);
          checked++;
        }
      }
    }
    assert.equal(checked, 2 * 6 * 2);
  });

  test('a button to the results only with an absolute link; a path is shown as text', () => {
    const absolute = JSON.parse(renderBody('slack', completedEvent(header(), `https://oas.example.org/results/${ID}`))) as { blocks: { type: string; elements?: { url?: string }[] }[] };
    assert.equal(absolute.blocks.find((b) => b.type === 'actions')?.elements?.[0]?.url, `https://oas.example.org/results/${ID}`);
    const path = renderBody('slack', completedEvent(header(), `/results/${ID}`));
    assert.ok(!path.includes('"actions"') && path.includes(`Results: /results/${ID}`));
    const card = (JSON.parse(renderBody('teams', completedEvent(header(), `https://oas.example.org/results/${ID}`))) as { attachments: { content: { actions: { url: string }[] } }[] }).attachments[0]!.content;
    assert.equal(card.actions[0]!.url, `https://oas.example.org/results/${ID}`);
  });

  test('text from outside is data: no Slack link, mention or formatting, no Teams markdown; observables defanged', async () => {
    const events = await eventsOf(header({ started_by: 'eve_<!here>*x*' }), `https://oas.example.org/results/${ID}`);
    for (const event of events) {
      const slack = JSON.parse(renderBody('slack', event)) as { text: string; blocks: Record<string, unknown>[] };
      for (const text of slackMrkdwn(slack)) {
        assert.doesNotMatch(text, /<(?!\/)/, `no control sequence in mrkdwn: ${text}`);
        assert.ok(!text.includes('evil.example') && !text.includes('!channel') && !text.includes('eve_'), `no outside text in mrkdwn: ${text}`);
      }
      const teams = (JSON.parse(renderBody('teams', event)) as { attachments: { content: Record<string, unknown> }[] }).attachments[0]!.content;
      for (const text of teamsMarkdown(teams)) assert.ok(!text.includes('evil') && !text.includes('!channel') && !text.includes('eve_'), `no outside text where Teams reads markdown: ${text}`);
    }
    const verdict = events.find((e) => e.type === 'observable.verdict' && e.data['verdict'] === 'malicious')!;
    const slack = renderBody('slack', verdict);
    assert.ok(slack.includes('hxxps://evil[.]example/login') && !slack.includes('https://evil.example/login'), 'the observable defanged');
    assert.ok(slack.includes(JSON.stringify(`phishtank: ${HOSTILE}`).slice(1, -1)), 'the reason as it is, in plain_text');
    const teams = renderBody('teams', verdict);
    assert.ok(teams.includes('hxxps://evil[.]example/login') && !teams.includes('https://evil.example/login'));
    assert.equal(escapeMrkdwn('<a> & <b>'), '&lt;a&gt; &amp; &lt;b&gt;');
    assert.equal(defang('HTTPS://a.b/c?d=e.f'), 'HXXPS://a[.]b/c?d=e[.]f');
  });
});
