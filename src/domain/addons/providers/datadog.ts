import type { ErrorDetail } from '../../../shared/errors.js';
import { renderBodyTemplate, templateProblem } from './body-template.js';
import { parameter, parseCustomHeaders, providerDefinition, type AddonProvider } from './provider.js';

const DATADOG_EVENTS_URL = 'https://api.datadoghq.com/api/v1/events';

/** Creates a Datadog event per Vexil event through Datadog's events API, as Unleash's Datadog addon does. */
export const datadogProvider: AddonProvider = {
  definition: providerDefinition({
    name: 'datadog',
    displayName: 'Datadog',
    description: 'Sends the events of Vexil to Datadog as Datadog events.',
    documentationUrl: 'https://docs.getunleash.io/reference/integrations/datadog',
    howTo: 'Create an API key in Datadog and paste it here. For another Datadog site (EU, US3…), set its events API URL.',
    parameters: [
      {
        name: 'url',
        displayName: 'Datadog events URL',
        type: 'url',
        placeholder: DATADOG_EVENTS_URL,
        description: `(Optional) The events API of your Datadog site. Defaults to ${DATADOG_EVENTS_URL}.`,
        required: false,
        sensitive: false,
      },
      {
        name: 'apiKey',
        displayName: 'Datadog API key',
        type: 'text',
        description: '(Required) Sent in the DD-API-KEY header.',
        required: true,
        sensitive: true,
      },
      {
        name: 'sourceTypeName',
        displayName: 'Datadog source type name',
        type: 'text',
        description: '(Optional) The source_type_name of the events.',
        required: false,
        sensitive: false,
      },
      {
        name: 'bodyTemplate',
        displayName: 'Body template',
        type: 'textfield',
        description: '(Optional) A Mustache template of the JSON body, with the event as {{event}}, instead of the standard Datadog event.',
        required: false,
        sensitive: false,
      },
    ],
  }),

  validate(parameters) {
    const template = parameter(parameters, 'bodyTemplate');
    const problem = template === undefined ? undefined : templateProblem(template);
    const problems: ErrorDetail[] = [];
    if (problem !== undefined) {
      problems.push({ path: '/body/parameters/bodyTemplate', message: `bodyTemplate is not a valid Mustache template: ${problem}` });
    }
    return problems;
  },

  prepare({ event, parameters }) {
    const template = parameter(parameters, 'bodyTemplate');
    const sourceTypeName = parameter(parameters, 'sourceTypeName');
    const tags = [
      `user:${event.createdBy}`,
      `action:${event.type}`,
      ...(event.project ? [`project:${event.project}`] : []),
      ...(event.environment ? [`env:${event.environment}`] : []),
      ...event.tags.map((tag) => `${tag.type}:${tag.value}`),
    ];
    const body =
      template === undefined
        ? JSON.stringify({
            // %%% fences make Datadog render the text as markdown.
            text: `%%% \n${event.summary}\n %%% `,
            title: 'Vexil notification update',
            tags,
            ...(sourceTypeName === undefined ? {} : { source_type_name: sourceTypeName }),
          })
        : renderBodyTemplate(template, event, 'application/json');
    const custom = parseCustomHeaders(parameter(parameters, 'customHeaders'));
    return {
      requests: [
        {
          url: parameter(parameters, 'url') ?? DATADOG_EVENTS_URL,
          contentType: 'application/json',
          headers: { 'DD-API-KEY': parameters.apiKey!, ...custom.headers },
          body,
        },
      ],
      problems: custom.problems,
    };
  },
};
