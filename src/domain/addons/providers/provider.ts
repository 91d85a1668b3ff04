import { EVENT_TYPES } from '../../events/event-types.js';
import type { EventView } from '../../events/event-log.js';
import type { ErrorDetail } from '../../../shared/errors.js';

/** One parameter of a provider, as Unleash's `addonParameterSchema` describes it to forms and clients. */
export interface AddonParameterDefinition {
  name: string;
  displayName: string;
  /** `url` is checked as an outbound URL; `textfield` is multi-line text. */
  type: 'url' | 'text' | 'textfield';
  description: string;
  placeholder?: string;
  required: boolean;
  /** Credentials: masked when read back, never logged, never put in events or integration events. */
  sensitive: boolean;
}

/** A provider as Unleash's `addonTypeSchema` lists it in `GET /api/admin/addons`. */
export interface AddonProviderDefinition {
  name: string;
  displayName: string;
  description: string;
  documentationUrl: string;
  howTo: string;
  parameters: AddonParameterDefinition[];
  /** The event types a configuration of this provider may subscribe to. */
  events: string[];
  /** Tag types the provider reads from flags; created with its first configuration. */
  tagTypes: Array<{ name: string; description: string; icon: string }>;
}

/** What one delivery attempt has to work with. */
export interface DeliveryContext {
  event: EventView;
  /** The stored parameters, secrets included: they go into requests, never into `details`. */
  parameters: Record<string, string>;
  /** The server's public URL, for links back to the flag. */
  baseUrl: string;
}

/** One HTTP POST of an attempt. */
export interface ProviderRequest {
  url: string;
  contentType: string;
  /** Provider headers and custom headers; the sender adds content type, delivery id and user agent. */
  headers: Record<string, string>;
  body: string;
}

export interface PreparedDelivery {
  /** Most providers send one request; Slack sends one per channel. */
  requests: ProviderRequest[];
  /** Parts of the configuration that could not be used: the attempt is `successWithErrors` if it succeeds. */
  problems: string[];
  /** Shown in the integration event's `details` besides url, contentType and body (e.g. Slack's channels). */
  extraDetails?: Record<string, unknown>;
}

export interface AddonProvider {
  definition: AddonProviderDefinition;
  /** Checks of the provider's own parameters beyond presence and URL syntax, as 400 details. */
  validate(parameters: Record<string, string>): ErrorDetail[];
  prepare(context: DeliveryContext): PreparedDelivery;
}

/** A parameter's value, or undefined when it is missing or blank (forms send blank optional fields as ""). */
export function parameter(parameters: Record<string, string>, name: string): string | undefined {
  const value = parameters[name];
  return value === undefined || value.trim() === '' ? undefined : value;
}

export const CUSTOM_HEADERS_PARAMETER: AddonParameterDefinition = {
  name: 'customHeaders',
  displayName: 'Extra HTTP headers',
  type: 'textfield',
  placeholder: '{\n  "ISTIO_USER_KEY": "hunter2",\n  "SOME_OTHER_CUSTOM_HTTP_HEADER": "SOMEVALUE"\n}',
  description:
    '(Optional) Extra HTTP headers as a JSON object of string values. If it cannot be used, the event is still delivered and the attempt is recorded as successWithErrors.',
  required: false,
  sensitive: true,
};

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Headers the sender owns: overriding them would break the request or receivers' de-duplication. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'x-vexil-delivery', 'x-vexil-event']);

/**
 * The usable headers of a `customHeaders` parameter, and a sentence for each part that is not usable. Never
 * throws: a bad value must not stop the delivery (Unleash delivers and reports it).
 */
export function parseCustomHeaders(raw: string | undefined): { headers: Record<string, string>; problems: string[] } {
  if (raw === undefined) return { headers: {}, problems: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { headers: {}, problems: ['customHeaders is not valid JSON and was ignored'] };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { headers: {}, problems: ['customHeaders is not a JSON object and was ignored'] };
  }
  const headers: Record<string, string> = {};
  const problems: string[] = [];
  for (const [name, value] of Object.entries(parsed)) {
    // Header names only: values may be credentials.
    if (!HEADER_NAME.test(name)) problems.push(`customHeaders: "${name}" is not a valid header name and was ignored`);
    else if (RESERVED_HEADERS.has(name.toLowerCase())) problems.push(`customHeaders: "${name}" is set by Vexil and was ignored`);
    else if (typeof value !== 'string') problems.push(`customHeaders: the value of "${name}" is not a string and was ignored`);
    else if (!HEADER_VALUE.test(value))
      problems.push(`customHeaders: the value of "${name}" has characters a header cannot carry and was ignored`);
    else headers[name] = value;
  }
  return { headers, problems };
}

/** The link to a flag in the admin UI, when the event concerns one. */
export function flagLink(baseUrl: string, event: EventView): string | undefined {
  if (!event.featureName || !event.project) return undefined;
  return `${baseUrl}/projects/${encodeURIComponent(event.project)}/features/${encodeURIComponent(event.featureName)}`;
}

/**
 * The event's markdown summary without its backslash escapes, for chat tools that do not understand them
 * (they would show `new\_checkout`).
 */
export function plainSummary(event: EventView): string {
  return event.summary.replace(/\\(.)/g, '$1');
}

/**
 * A provider's definition as the API lists it: every event type offered, the custom headers parameter last, and
 * no tag types unless the provider reads some.
 */
export function providerDefinition(
  definition: Omit<AddonProviderDefinition, 'events' | 'tagTypes'> & Partial<Pick<AddonProviderDefinition, 'tagTypes'>>,
): AddonProviderDefinition {
  return {
    ...definition,
    parameters: [...definition.parameters, CUSTOM_HEADERS_PARAMETER],
    events: [...EVENT_TYPES],
    tagTypes: definition.tagTypes ?? [],
  };
}
