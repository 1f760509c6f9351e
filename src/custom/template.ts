/**
 * The templates of a custom engine: literal text and `{name}` placeholders, nothing else evaluated
 * (`{{` and `}}` write a brace). The names a template may use are fixed where it is declared: the
 * request knows `{value}`, `{raw}`, `{type}` and `{secret.NAME}`; a summary or a reason knows the
 * result's fields.
 */

export type TemplatePart = { text: string } | { name: string };
export type Template = readonly TemplatePart[];

/** Why a text is not a template for the names it may use (one phrase), thrown by parseTemplate. */
export class TemplateError extends Error {
  override name = 'TemplateError';
}

/**
 * The parts of a template; every placeholder must be one `known` accepts. Throws TemplateError:
 * `unknown placeholder {valu}`, `unclosed "{"`, ...
 */
export function parseTemplate(text: string, known: (name: string) => boolean): Template {
  const parts: TemplatePart[] = [];
  let literal = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '{' && text[i + 1] === '{') {
      literal += '{';
      i++;
    } else if (c === '}' && text[i + 1] === '}') {
      literal += '}';
      i++;
    } else if (c === '{') {
      const end = text.indexOf('}', i + 1);
      if (end < 0) throw new TemplateError(`unclosed "{" at character ${i + 1} (write "{{" for a brace)`);
      const name = text.slice(i + 1, end);
      if (!known(name)) throw new TemplateError(`unknown placeholder {${name}}`);
      if (literal) parts.push({ text: literal });
      literal = '';
      parts.push({ name });
      i = end;
    } else if (c === '}') {
      throw new TemplateError(`unopened "}" at character ${i + 1} (write "}}" for a brace)`);
    } else {
      literal += c;
    }
  }
  if (literal) parts.push({ text: literal });
  return parts;
}

/** The template's text with each placeholder replaced by `value(name)`. */
export function renderTemplate(template: Template, value: (name: string) => string): string {
  return template.map((part) => ('text' in part ? part.text : value(part.name))).join('');
}

/** The placeholders a template uses. */
export function placeholders(template: Template): string[] {
  return template.flatMap((part) => ('name' in part ? [part.name] : []));
}
