import Mustache from 'mustache';
import type { EventView } from '../../events/event-log.js';

/**
 * Body templates are Mustache, as in Unleash, so existing templates work unchanged (`{{event.type}}`,
 * `{{event.data.name}}`, sections). Unlike Unleash, values are not HTML-escaped, which corrupted JSON bodies
 * (`"` became `&quot;`): in a JSON body a string is escaped as the inside of a JSON string and any other value
 * (object, array, number) is written as JSON, so `"name": "{{event.featureName}}"` and `"data": {{event.data}}`
 * both give valid JSON whatever the values hold. Other content types get values as text, objects as JSON.
 */
export function isJsonContentType(contentType: string): boolean {
  return /^[^;]*[/+]json\s*(;|$)/i.test(contentType.trim());
}

function jsonEscape(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value).slice(1, -1) : JSON.stringify(value);
}

function textEscape(value: unknown): string {
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

export function renderBodyTemplate(template: string, event: EventView, contentType: string): string {
  const escapeValue = isJsonContentType(contentType) ? jsonEscape : textEscape;
  return Mustache.render(template, { event }, undefined, { escape: escapeValue });
}

/** Why a template cannot be rendered (e.g. an unclosed section), or undefined when it can. */
export function templateProblem(template: string): string | undefined {
  try {
    Mustache.parse(template);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
