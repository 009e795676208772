// A tiny element builder: the console has no framework, so the page stays a few kilobytes.
type Child = Node | string | number | null | undefined | false;

export function h(tag: string, attrs: Record<string, string | ((e: Event) => void) | boolean | undefined> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, value);
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) el.append(typeof child === 'object' ? child : String(child));
  return el;
}

/** Replaces what an element shows. */
export function show(el: Element, ...children: Child[]): void {
  el.replaceChildren(
    ...children.filter((c): c is Node | string | number => c !== null && c !== undefined && c !== false).map((c) => (typeof c === 'object' ? c : String(c))),
  );
}

export const statusTag = (status: string) => h('span', { class: `status status-${status}`, 'data-status': status }, status);

/** Long text cut for the timeline, with a button that shows all of it. */
export function truncated(text: string, max = 300): HTMLElement {
  if (text.length <= max) return h('pre', {}, text);
  const pre = h('pre', {}, text.slice(0, max) + '…');
  const more = h(
    'button',
    {
      type: 'button',
      onclick: () => {
        show(pre, text);
        more.remove();
      },
    },
    'show all',
  );
  return h('div', {}, pre, more);
}
