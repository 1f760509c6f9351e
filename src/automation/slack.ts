/**
 * An event as a Slack message (setting `webhooks[].format: "slack"`): what Slack's incoming
 * webhooks take, `{ text, blocks }` in Block Kit (https://api.slack.com/block-kit). `text` is the
 * notification's fallback; the blocks are a header, the facts (oas's own words, mrkdwn), the text
 * from outside (plain_text: never read as mrkdwn, so no formatting, link or mention can be slipped
 * in), a context line and, with an absolute link (`public_url`), a button to the results.
 *
 * mrkdwn texts hold only oas's words, with `&`, `<` and `>` escaped all the same, and
 * `verbatim: true` (no automatic links, channel names or mentions). Lengths stay within Block
 * Kit's limits: header 150, section text 3000, a field 2000, a button's text 75 and URL 3000,
 * at most 10 fields and 50 blocks.
 */
import { chatMessage, cut } from './chat-text.js';
import type { OasEvent } from './events.js';
import { isAbsolute } from './links.js';

/** `&`, `<` and `>` as Slack asks them in mrkdwn (its control sequences start with `<`). */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

type TextObject = { type: 'plain_text'; text: string; emoji?: boolean } | { type: 'mrkdwn'; text: string; verbatim: true };

const plain = (text: string, max: number): TextObject => ({ type: 'plain_text', text: cut(text, max) || ' ', emoji: false });
const mrkdwn = (text: string): TextObject => ({ type: 'mrkdwn', text, verbatim: true });

export interface SlackMessage {
  text: string;
  blocks: Record<string, unknown>[];
}

export function slackMessage(event: OasEvent): SlackMessage {
  const message = chatMessage(event);
  const blocks: Record<string, unknown>[] = [{ type: 'header', text: plain(message.title, 150) }];
  if (message.facts.length > 0) {
    blocks.push({
      type: 'section',
      fields: message.facts.slice(0, 10).map((f) => mrkdwn(cut(`*${escapeMrkdwn(f.title)}*\n${escapeMrkdwn(f.value)}`, 2000))),
    });
  }
  for (const paragraph of message.data.slice(0, 20)) blocks.push({ type: 'section', text: plain(paragraph, 3000) });
  if (message.note) blocks.push({ type: 'context', elements: [mrkdwn(cut(escapeMrkdwn(message.note), 2000))] });
  if (message.link && isAbsolute(message.link) && message.link.length <= 3000) {
    blocks.push({ type: 'actions', elements: [{ type: 'button', text: plain('Open results', 75), url: message.link }] });
  } else if (message.link) {
    blocks.push({ type: 'context', elements: [plain(`Results: ${message.link}`, 2000)] });
  }
  const headline = message.facts.length > 0 ? `${message.title} (${message.facts.map((f) => `${f.title}: ${f.value}`).slice(0, 2).join(', ')})` : message.title;
  return { text: cut(escapeMrkdwn(headline), 3000), blocks };
}
