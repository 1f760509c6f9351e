/**
 * The graph view of the results page: the observables shown, the IPs they resolve to, the ASNs
 * the network engines name and the engines that flag them (malicious or suspicious), drawn with
 * cytoscape (served by oas itself as /assets/cytoscape.js, loaded only when this view opens).
 *
 * The server gives each finished observable its part of the graph (`ObservableView.graph`,
 * src/view/graph-view.ts, node ids shared across observables); this module merges the parts of
 * the rows shown (the filters apply), draws them on a canvas, and lists the same nodes and links
 * as text under it, for the keyboard and screen readers. The canvas keeps its zoom and pan across
 * polls; it is laid out again only when the nodes change.
 *
 * The layout: the linked nodes by force (cose), the observables with no link in a grid under them
 * (as wide as the canvas's shape asks), the whole fitted to the canvas but never so small that a
 * label is drawn under MIN_LABEL_PX: past that, the graph is panned or zoomed out by hand.
 */
import type cytoscape from 'cytoscape';
import { el, replace } from './dom.js';
import { plural } from './format.js';
import type { AnalysisView, GraphEdgeView, GraphNodeView, ObservableView } from '../../src/view/types.js';

type Cy = cytoscape.Core;
type CytoscapeFactory = typeof cytoscape;

const LIBRARY_URL = '/assets/cytoscape.js';
/** Labels' font size (nodes and edges), in graph units (CSS px at zoom 1). */
const LABEL_FONT_PX = 13;
/** The smallest a label is drawn at the default zoom, in CSS px: font size × zoom. */
const MIN_LABEL_PX = 11;
/** Room around the drawing when it is fitted, in CSS px. */
const PADDING = 30;
/** Space between the cells of the grid of unlinked observables, in graph units. */
const GRID_GAP = 24;
const KIND_ORDER: GraphNodeView['kind'][] = ['observable', 'ip', 'asn', 'engine'];
const KIND_HEADING: Record<GraphNodeView['kind'], string> = {
  observable: 'Observables',
  ip: 'Resolved IP addresses',
  asn: 'Autonomous systems (ASN)',
  engine: 'Engines that flag them',
};
const RELATION_TEXT: Record<GraphEdgeView['relation'], string> = {
  resolves_to: 'resolves to',
  in_asn: 'is in',
  flags: 'flags',
};

// --- one graph per page, kept across renders (zoom, pan and layout survive a poll) ---
const canvasHost = el('div', {
  id: 'graph-canvas',
  class: 'graph-canvas',
  tabindex: 0,
  role: 'img',
  'aria-roledescription': 'graph',
  'aria-describedby': 'graph-help',
});
const help = el('p', { id: 'graph-help', class: 'muted graph-help' },
  'Drag to move, scroll or + and − to zoom, arrow keys to pan, 0 to fit. The same nodes and links are listed as text below.');
const notice = el('p', { class: 'muted', id: 'graph-notice', role: 'status' });
const textNodes = el('div', { id: 'graph-nodes' });
const textEdges = el('div', { id: 'graph-edges' });
const textAlternative = el('section', { id: 'graph-text', class: 'graph-text', tabindex: 0, 'aria-label': 'The graph as text' },
  el('h2', null, 'The graph as text'), textNodes, textEdges);
const wrapper = el('div', { class: 'graph-view', id: 'graph-view' }, help, notice, canvasHost, textAlternative);

let library: Promise<CytoscapeFactory> | null = null;
let cy: Cy | null = null;
let drawnSignature = '';
let latest: { nodes: GraphNodeView[]; edges: GraphEdgeView[] } = { nodes: [], edges: [] };

/** The graph of `rows` (the observables the filters leave), drawn into one element kept across renders. */
export function renderGraph(view: AnalysisView, rows: ObservableView[]): HTMLElement {
  latest = mergeGraph(rows);
  renderText(latest, view, rows);
  notice.textContent = rows.length === 0 ? 'No observable to draw: the filters leave none.' : '';
  canvasHost.setAttribute('aria-label', `Graph of ${plural(count(latest.nodes, 'observable'), 'observable')}, ${plural(count(latest.nodes, 'ip'), 'resolved IP')}, ${plural(count(latest.nodes, 'asn'), 'ASN')} and ${plural(count(latest.nodes, 'engine'), 'flagging engine')}`);
  // Drawn once the wrapper is in the page (the caller puts it there) and the library is loaded.
  window.requestAnimationFrame(() => void draw());
  return wrapper;
}

const count = (nodes: GraphNodeView[], kind: GraphNodeView['kind']) => nodes.filter((n) => n.kind === kind).length;

/** The union of the rows' parts; a row still running is its observable alone. */
export function mergeGraph(rows: ObservableView[]): { nodes: GraphNodeView[]; edges: GraphEdgeView[] } {
  const nodes = new Map<string, GraphNodeView>();
  const edges = new Map<string, GraphEdgeView>();
  const put = (node: GraphNodeView) => {
    const held = nodes.get(node.id);
    if (!held) return void nodes.set(node.id, { ...node });
    // An IP that is both an observable and another's resolved address is drawn as the observable.
    if (node.kind === 'observable' && held.kind !== 'observable') return void nodes.set(node.id, { ...node });
    if (node.level === 'malicious' || (node.level && !held.level)) held.level = node.level;
    if (node.listed) held.listed = true;
  };
  for (const row of rows) {
    const own: GraphNodeView = { id: observableId(row), kind: 'observable', label: row.observable, type: row.type, ...(row.verdict ? { verdict: row.verdict } : {}) };
    put(own);
    for (const node of row.graph?.nodes ?? []) put(node);
    for (const edge of row.graph?.edges ?? []) if (!edges.has(edge.id)) edges.set(edge.id, edge);
  }
  return { nodes: [...nodes.values()], edges: [...edges.values()].filter((e) => nodes.has(e.source) && nodes.has(e.target)) };
}

/** The id the server gives an observable's node (src/view/graph-view.ts). */
function observableId(row: ObservableView): string {
  return row.type === 'IPv4' || row.type === 'IPv6' ? `ip:${row.observable}` : `obs:${row.observable}`;
}

// --- the text alternative ---
function renderText(graph: { nodes: GraphNodeView[]; edges: GraphEdgeView[] }, view: AnalysisView, rows: ObservableView[]): void {
  const labels = new Map(graph.nodes.map((n) => [n.id, n.label]));
  replace(textNodes, KIND_ORDER.map((kind) => {
    const nodes = graph.nodes.filter((n) => n.kind === kind);
    if (nodes.length === 0) return null;
    return [
      el('h3', null, `${KIND_HEADING[kind]} (${nodes.length})`),
      el('ul', { class: 'graph-node-list', 'data-kind': kind }, nodes.map((n) => el('li', { 'data-node': n.id }, nodeText(n)))),
    ];
  }));
  const pending = rows.filter((r) => !r.done).length;
  replace(textEdges,
    el('h3', null, `Links (${graph.edges.length})`),
    graph.edges.length === 0
      ? el('p', { class: 'muted' }, view.complete || pending === 0 ? 'No links: no resolved IP, ASN or flagging engine for these observables.' : 'No links yet: observables still running.')
      : el('div', { class: 'table-scroll' },
        el('table', { class: 'graph-edge-table' },
          el('thead', null, el('tr', null, el('th', { scope: 'col' }, 'From'), el('th', { scope: 'col' }, 'Link'), el('th', { scope: 'col' }, 'To'), el('th', { scope: 'col' }, 'Detail'))),
          el('tbody', null, graph.edges.map((e) => el('tr', { 'data-edge': e.id, 'data-relation': e.relation },
            el('td', null, el('code', { class: 'obs' }, labels.get(e.source) ?? e.source)),
            el('td', null, e.level ? `${RELATION_TEXT[e.relation]} (${e.level})` : RELATION_TEXT[e.relation]),
            el('td', null, el('code', { class: 'obs' }, labels.get(e.target) ?? e.target)),
            el('td', null, e.note)))))));
}

function nodeText(node: GraphNodeView): (string | HTMLElement)[] {
  const extra = node.kind === 'observable'
    ? [node.type, node.verdict ?? 'running'].filter(Boolean).join(', ')
    : node.kind === 'engine' ? node.level ?? ''
    : node.kind === 'asn' && node.listed ? 'listed in bad-ASN lists' : '';
  return [el('code', { class: 'obs' }, node.label), extra ? ` (${extra})` : ''];
}

// --- the canvas ---
async function draw(): Promise<void> {
  if (!wrapper.isConnected) return;
  let factory: CytoscapeFactory;
  try {
    factory = await loadLibrary();
  } catch {
    notice.textContent = 'The graph library could not be loaded: the graph is listed as text below.';
    return;
  }
  if (!wrapper.isConnected) return;
  const elements = toElements(latest);
  const signature = elements.map((e) => `${e.data.id}|${e.classes ?? ''}`).join('\n');
  if (!cy) {
    cy = factory({ container: canvasHost, elements, style: graphStyle(), minZoom: 0.2, maxZoom: 4, wheelSensitivity: 0.4, boxSelectionEnabled: false });
    drawnSignature = signature;
    layout();
    window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => cy?.style(graphStyle()));
    return;
  }
  cy.resize(); // the element may have been out of the page (another view) since the last draw
  if (signature === drawnSignature) return;
  drawnSignature = signature;
  // Nodes already drawn start where they were: the layout moves them little, and a poll that adds an observable does not reshuffle the rest.
  const positions = new Map(cy.nodes().map((node) => [node.id(), { ...node.position() }] as const));
  cy.batch(() => {
    cy!.elements().remove();
    cy!.add(elements.map((e) => (e.group === 'nodes' && positions.has(String(e.data.id)) ? { ...e, position: positions.get(String(e.data.id))! } : e)));
  });
  layout();
}

/** cytoscape's module, once. It adds an inline <style> unless one with its id exists; the CSP refuses inline styles, and oas.css has its one rule. */
function loadLibrary(): Promise<CytoscapeFactory> {
  if (!document.getElementById('__________cytoscape_stylesheet')) {
    document.head.appendChild(el('meta', { id: '__________cytoscape_stylesheet', name: 'cytoscape-stylesheet', content: 'in oas.css' }));
  }
  library ??= (import(LIBRARY_URL) as Promise<{ default: CytoscapeFactory }>).then((m) => m.default);
  library.catch(() => { library = null; });
  return library;
}

function layout(): void {
  if (!cy) return;
  const linked = cy.nodes().filter((node) => node.degree(false) > 0);
  const alone = cy.nodes().filter((node) => node.degree(false) === 0);
  if (linked.length > 0) {
    linked.union(linked.connectedEdges()).layout({ name: 'cose', animate: false, fit: false, nodeDimensionsIncludeLabels: true, randomize: false, idealEdgeLength: () => 60, nodeRepulsion: () => 4000, componentSpacing: 60 }).run();
    // A layout taller than wide in a wide area (or the reverse) is turned a quarter: it is drawn larger.
    const box = linked.boundingBox({});
    if ((box.h > box.w * 1.2 && canvasHost.clientWidth > canvasHost.clientHeight) || (box.w > box.h * 1.2 && canvasHost.clientHeight > canvasHost.clientWidth)) {
      linked.positions((node) => ({ x: node.position('y'), y: node.position('x') }));
    }
  }
  if (alone.length > 0) gridBelow(alone, linked.length > 0 ? linked.boundingBox({}) : null);
  cy.fit(undefined, PADDING);
  // A small graph fitted to a large area would be drawn huge; a large one no smaller than its labels can be read.
  const readable = MIN_LABEL_PX / LABEL_FONT_PX;
  if (cy.zoom() > 1.6) cy.zoom(1.6);
  if (cy.zoom() < readable) cy.zoom(readable);
  placeDrawing();
}

/**
 * The unlinked observables in rows and columns under `above` (the linked part, if any): as many
 * columns as make the grid about as wide, for its height, as the canvas is.
 */
function gridBelow(nodes: cytoscape.NodeCollection, above: cytoscape.BoundingBox12 & cytoscape.BoundingBoxWH | null): void {
  const boxes = nodes.map((node) => node.boundingBox({ includeLabels: true }));
  const cellW = Math.max(...boxes.map((b) => b.w)) + GRID_GAP;
  const cellH = Math.max(...boxes.map((b) => b.h)) + GRID_GAP;
  const aspect = Math.max(0.5, canvasHost.clientWidth / Math.max(1, canvasHost.clientHeight));
  const cols = Math.min(nodes.length, Math.max(1, Math.round(Math.sqrt((nodes.length * aspect * cellH) / cellW))));
  const width = cols * cellW;
  const left = above ? above.x1 + Math.max(0, (above.w - width) / 2) : 0;
  const top = above ? above.y2 + cellH : 0;
  // Sorted by label, so a poll that adds an observable moves the others little.
  const order = new Map(nodes.sort((a, b) => String(a.data('label')).localeCompare(String(b.data('label')), undefined, { numeric: true })).map((node, i) => [node.id(), i] as const));
  nodes.positions((node) => {
    const i = order.get(node.id()) ?? 0;
    return { x: left + (i % cols) * cellW + cellW / 2, y: top + Math.floor(i / cols) * cellH + cellH / 2 };
  });
}

/** The drawing centred where it fits the canvas, else from its top (left) edge: zoomed in past a fit, its start shows. */
function placeDrawing(): void {
  if (!cy) return;
  const box = cy.elements().boundingBox({});
  const zoom = cy.zoom();
  const width = canvasHost.clientWidth;
  const height = canvasHost.clientHeight;
  const x = box.w * zoom + 2 * PADDING <= width ? (width - box.w * zoom) / 2 - box.x1 * zoom : PADDING - box.x1 * zoom;
  const y = box.h * zoom + 2 * PADDING <= height ? (height - box.h * zoom) / 2 - box.y1 * zoom : PADDING - box.y1 * zoom;
  cy.pan({ x, y });
}

function toElements(graph: { nodes: GraphNodeView[]; edges: GraphEdgeView[] }): cytoscape.ElementDefinition[] {
  return [
    ...graph.nodes.map((n) => ({
      group: 'nodes' as const,
      data: { id: n.id, label: n.label },
      classes: [n.kind, n.verdict ? `verdict-${n.verdict}` : '', n.level ? `level-${n.level}` : '', n.listed ? 'listed' : ''].filter(Boolean).join(' '),
    })),
    ...graph.edges.map((e) => ({
      group: 'edges' as const,
      data: { id: e.id, source: e.source, target: e.target, label: e.relation === 'flags' ? e.level ?? '' : '' },
      classes: [e.relation, e.level ? `level-${e.level}` : ''].filter(Boolean).join(' '),
    })),
  ];
}

/** Colours from the page's theme (oas.css custom properties): labels are page text on the page's surface. */
function graphStyle(): cytoscape.StylesheetJson {
  const css = getComputedStyle(document.documentElement);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  const fg = v('--fg', '#1b1f24');
  const surface = v('--surface', '#ffffff');
  const line = v('--muted', '#5b6470');
  const verdict = (name: string) => v(`--verdict-${name}-bg`, '#5b6470');
  return [
    { selector: 'node', style: {
      label: 'data(label)', color: fg, 'font-size': LABEL_FONT_PX, 'font-family': 'system-ui, sans-serif',
      'text-valign': 'bottom', 'text-margin-y': 4, 'text-wrap': 'wrap', 'text-max-width': '180px', 'text-overflow-wrap': 'anywhere',
      'text-background-color': surface, 'text-background-opacity': 0.9, 'text-background-padding': '2px', 'text-background-shape': 'roundrectangle',
      'background-color': surface, 'border-width': 2, 'border-color': line, width: 26, height: 26,
    } },
    { selector: 'node.observable', style: { shape: 'ellipse', width: 34, height: 34, 'font-weight': 'bold' } },
    { selector: 'node.verdict-malicious', style: { 'background-color': verdict('malicious') } },
    { selector: 'node.verdict-suspicious', style: { 'background-color': verdict('suspicious') } },
    { selector: 'node.verdict-clean', style: { 'background-color': verdict('clean') } },
    { selector: 'node.verdict-unknown', style: { 'background-color': verdict('unknown') } },
    { selector: 'node.ip', style: { shape: 'diamond', 'background-color': v('--accent-soft', '#e3ecfb'), 'border-color': v('--accent', '#1f56c2') } },
    { selector: 'node.asn', style: { shape: 'hexagon', width: 30, height: 30 } },
    { selector: 'node.asn.listed', style: { 'border-color': verdict('malicious'), 'border-width': 4 } },
    { selector: 'node.engine', style: { shape: 'round-rectangle', width: 30, height: 22 } },
    { selector: 'node.level-malicious', style: { 'background-color': verdict('malicious') } },
    { selector: 'node.level-suspicious', style: { 'background-color': verdict('suspicious') } },
    { selector: 'node:selected', style: { 'border-color': v('--focus', '#1f56c2'), 'border-width': 4 } },
    { selector: 'edge', style: {
      width: 1.5, 'line-color': line, 'target-arrow-color': line, 'target-arrow-shape': 'triangle', 'curve-style': 'bezier',
      label: 'data(label)', color: fg, 'font-size': LABEL_FONT_PX, 'text-background-color': surface, 'text-background-opacity': 0.9, 'text-background-padding': '1px',
    } },
    { selector: 'edge.resolves_to', style: { 'line-style': 'dashed' } },
    { selector: 'edge.level-malicious', style: { 'line-color': verdict('malicious'), 'target-arrow-color': verdict('malicious'), width: 2.5 } },
    { selector: 'edge.level-suspicious', style: { 'line-color': verdict('suspicious'), 'target-arrow-color': verdict('suspicious'), width: 2 } },
  ];
}

// Keyboard: + / − zoom, arrows pan, 0 fits the whole graph.
canvasHost.addEventListener('keydown', (event) => {
  if (!cy || event.altKey || event.ctrlKey || event.metaKey) return;
  const step = 40;
  const center = { x: canvasHost.clientWidth / 2, y: canvasHost.clientHeight / 2 };
  const zoom = (factor: number) => cy!.zoom({ level: cy!.zoom() * factor, renderedPosition: center });
  const actions: Record<string, () => void> = {
    '+': () => zoom(1.25), '=': () => zoom(1.25), '-': () => zoom(0.8), '_': () => zoom(0.8),
    '0': () => cy!.fit(undefined, PADDING),
    ArrowLeft: () => cy!.panBy({ x: step, y: 0 }), ArrowRight: () => cy!.panBy({ x: -step, y: 0 }),
    ArrowUp: () => cy!.panBy({ x: 0, y: step }), ArrowDown: () => cy!.panBy({ x: 0, y: -step }),
  };
  const action = actions[event.key];
  if (!action) return;
  event.preventDefault();
  action();
});
