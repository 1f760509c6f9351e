/**
 * An event as a Microsoft Teams message (setting `webhooks[].format: "teams"`), for the
 * "When a Teams webhook request is received" flow of Teams Workflows: a message with one Adaptive
 * Card attachment (`{ type: "message", attachments: [{ contentType:
 * "application/vnd.microsoft.card.adaptive", content: { type: "AdaptiveCard", version: "1.4",
 * body, actions } }] }`, https://adaptivecards.io/explorer/).
 *
 * oas's own words go in a TextBlock and a FactSet; text from outside goes in RichTextBlock
 * TextRuns, which Adaptive Cards never read as markdown (a TextBlock or a fact would), so an
 * observable or a reason shows as it is. The results link is an Action.OpenUrl when absolute
 * (`public_url`), else a line of text.
 */
import { chatMessage, cut } from './chat-text.js';
import type { OasEvent } from './events.js';
import { isAbsolute } from './links.js';

export const ADAPTIVE_CARD = 'application/vnd.microsoft.card.adaptive';

const run = (text: string) => ({ type: 'TextRun', text: cut(text, 4000) });
const richText = (text: string, extra: Record<string, unknown> = {}) => ({ type: 'RichTextBlock', inlines: [run(text)], ...extra });

export interface TeamsMessage {
  type: 'message';
  attachments: { contentType: typeof ADAPTIVE_CARD; contentUrl: null; content: Record<string, unknown> }[];
}

export function teamsMessage(event: OasEvent): TeamsMessage {
  const message = chatMessage(event);
  const body: Record<string, unknown>[] = [{ type: 'TextBlock', text: message.title, weight: 'Bolder', size: 'Medium', wrap: true }];
  if (message.facts.length > 0) body.push({ type: 'FactSet', facts: message.facts.map((f) => ({ title: f.title, value: f.value })) });
  for (const paragraph of message.data.slice(0, 20)) body.push(richText(paragraph));
  if (message.note) body.push(richText(message.note, { separator: true }));
  const actions: Record<string, unknown>[] = [];
  if (message.link && isAbsolute(message.link)) actions.push({ type: 'Action.OpenUrl', title: 'Open results', url: message.link });
  else if (message.link) body.push(richText(`Results: ${message.link}`));
  return {
    type: 'message',
    attachments: [{
      contentType: ADAPTIVE_CARD,
      contentUrl: null,
      content: {
        $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
        type: 'AdaptiveCard',
        version: '1.4',
        body,
        ...(actions.length ? { actions } : {}),
      },
    }],
  };
}
