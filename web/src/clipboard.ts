/** Copy buttons: the Clipboard API where the page is a secure context, a hidden text area elsewhere. */
import { announce, el } from './dom.js';

export async function copyText(text: string): Promise<boolean> {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // fall through: permission refused, document not focused...
    }
  }
  const area = el('textarea', { class: 'visually-hidden', readonly: true, 'aria-hidden': 'true' });
  area.value = text;
  document.body.appendChild(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}

/** A button that copies `text()` and says so, on the button and to screen readers. */
export function copyButton(label: string, text: () => string, description: string, className = 'copy'): HTMLButtonElement {
  const button = el('button', { type: 'button', class: className, title: description, 'aria-label': description, 'data-copy': label }, label);
  button.addEventListener('click', async () => {
    const ok = await copyText(text());
    button.textContent = ok ? 'Copied' : 'Copy failed';
    button.classList.toggle('copied', ok);
    announce(ok ? `${description}: copied` : `${description}: copy failed`);
    window.setTimeout(() => {
      button.textContent = label;
      button.classList.remove('copied');
    }, 1500);
  });
  return button;
}
