/**
 * Building the DOM from data. Text goes in as text nodes and attributes through setAttribute:
 * there is no innerHTML anywhere in the pages, so an observable like `<script>` stays text.
 */
export type Child = Node | string | number | null | undefined | false | Child[];
type AttrValue = string | number | boolean | null | undefined;
export type Attrs = Record<string, AttrValue | ((event: Event) => void)>;

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (typeof value === 'function') node.addEventListener(name.replace(/^on/, '').toLowerCase(), value);
    else if (value === true) node.setAttribute(name, '');
    else if (value !== false && value !== null && value !== undefined) node.setAttribute(name, String(value));
  }
  append(node, children);
  return node;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces every child of `parent`. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`missing element #${id}`);
  return node as T;
}

/** The page's <main>, emptied (its <noscript> notice goes). */
export function mainElement(): HTMLElement {
  const main = byId('main');
  main.replaceChildren();
  return main;
}

/** A polite live region for short announcements ("Copied"). */
export function announce(message: string): void {
  let region = document.getElementById('announcer');
  if (!region) {
    region = el('div', { id: 'announcer', class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });
    document.body.appendChild(region);
  }
  region.textContent = '';
  window.setTimeout(() => { region.textContent = message; }, 30);
}

/** A notice shown in place of the page when its data cannot be loaded. */
export function errorNotice(message: string): HTMLElement {
  return el('p', { class: 'notice error', role: 'alert' }, message);
}
