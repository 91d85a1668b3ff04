import type { ErrorDetail } from '../../../shared/errors.js';
import { renderBodyTemplate, templateProblem } from './body-template.js';
import { parameter, parseCustomHeaders, providerDefinition, type AddonProvider } from './provider.js';

const DEFAULT_CONTENT_TYPE = 'application/json';
/** A media type with optional parameters, as a Content-Type header takes it. */
const MEDIA_TYPE = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(\s*;\s*[\w!#$&^.+-]+=("[^"\r\n]*"|[\w!#$&^.+-]+))*$/;

/** A generic HTTP POST of the event, as JSON or as the body template renders it. */
export const webhookProvider: AddonProvider = {
  definition: providerDefinition({
    name: 'webhook',
    displayName: 'Webhook',
    description: 'A webhook is a generic way to post the events of Vexil to another service.',
    documentationUrl: 'https://docs.getunleash.io/reference/integrations/webhook',
    howTo:
      'Vexil POSTs each matching event to the URL, with an X-Vexil-Delivery header that stays the same across retries so the receiver can ignore duplicates.',
    parameters: [
      {
        name: 'url',
        displayName: 'Webhook URL',
        type: 'url',
        description: '(Required) Vexil POSTs to this URL; failed attempts are retried with exponential backoff.',
        required: true,
        sensitive: true,
      },
      {
        name: 'contentType',
        displayName: 'Content-Type',
        type: 'text',
        placeholder: DEFAULT_CONTENT_TYPE,
        description: `(Optional) The Content-Type header of the request. Defaults to "${DEFAULT_CONTENT_TYPE}".`,
        required: false,
        sensitive: false,
      },
      {
        name: 'authorization',
        displayName: 'Authorization',
        type: 'text',
        description: '(Optional) The Authorization header of the request. Not sent if left blank.',
        required: false,
        sensitive: true,
      },
      {
        name: 'bodyTemplate',
        displayName: 'Body template',
        type: 'textfield',
        placeholder:
          '{\n  "event": "{{event.type}}",\n  "createdBy": "{{event.createdBy}}",\n  "featureToggle": "{{event.featureName}}",\n  "data": {{event.data}}\n}',
        description:
          '(Optional) A Mustache template of the body, with the event as {{event}}. In a JSON body, strings are JSON-escaped and objects are written as JSON. Without a template the body is the event as JSON.',
        required: false,
        sensitive: false,
      },
    ],
  }),

  validate(parameters) {
    const problems: ErrorDetail[] = [];
    const contentType = parameter(parameters, 'contentType');
    if (contentType !== undefined && !MEDIA_TYPE.test(contentType.trim())) {
      problems.push({
        path: '/body/parameters/contentType',
        message: `contentType must be a media type such as application/json (got ${JSON.stringify(contentType)})`,
      });
    }
    const template = parameter(parameters, 'bodyTemplate');
    const problem = template === undefined ? undefined : templateProblem(template);
    if (problem !== undefined) {
      problems.push({ path: '/body/parameters/bodyTemplate', message: `bodyTemplate is not a valid Mustache template: ${problem}` });
    }
    return problems;
  },

  prepare({ event, parameters }) {
    const contentType = parameter(parameters, 'contentType')?.trim() ?? DEFAULT_CONTENT_TYPE;
    const template = parameter(parameters, 'bodyTemplate');
    const body = template === undefined ? JSON.stringify(event) : renderBodyTemplate(template, event, contentType);
    const custom = parseCustomHeaders(parameter(parameters, 'customHeaders'));
    const authorization = parameter(parameters, 'authorization');
    const headers = { ...(authorization === undefined ? {} : { Authorization: authorization }), ...custom.headers };
    return { requests: [{ url: parameters.url!, contentType, headers, body }], problems: custom.problems };
  },
};
