/**
 * What a push says (issue 37), the same on every surface: one line (`oas push`, the results page,
 * MCP) and the JSON the API answers (`pushAnswerSchema` of src/push/request.ts).
 */
import type { PushReport } from './service.js';

/** The outcome's line, with what was left out. */
export function sentence(report: PushReport): string {
  const left = report.withheld > 0 ? ` (${report.withheld} of the team's own observables withheld: TLP:RED is above the target's max_tlp)` : '';
  return `${report.outcome.line}${left}`;
}

/** The outcome as JSON: what the API answers too. */
export function reportJson(report: PushReport): Record<string, unknown> {
  const { outcome } = report;
  return {
    target: outcome.target,
    kind: outcome.kind,
    id: outcome.id,
    ...(outcome.link ? { link: outcome.link } : {}),
    created: outcome.created,
    added: outcome.added,
    existing: outcome.existing,
    ...(outcome.indicators !== undefined ? { indicators: outcome.indicators } : {}),
    selected: report.selected,
    withheld: report.withheld,
    message: sentence(report),
  };
}
