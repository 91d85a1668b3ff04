import { flagLink, parameter, parseCustomHeaders, plainSummary, providerDefinition, type AddonProvider } from './provider.js';

/** Posts a MessageCard to a Microsoft Teams incoming webhook, in the shape Unleash's Teams addon sends. */
export const teamsProvider: AddonProvider = {
  definition: providerDefinition({
    name: 'teams',
    displayName: 'Microsoft Teams',
    description: 'Posts the events of Vexil to a Microsoft Teams channel.',
    documentationUrl: 'https://docs.getunleash.io/reference/integrations/teams',
    howTo: 'Add an incoming webhook to the Teams channel and paste its URL.',
    parameters: [
      {
        name: 'url',
        displayName: 'Microsoft Teams webhook URL',
        type: 'url',
        description: '(Required) The incoming webhook URL Teams gave you.',
        required: true,
        sensitive: true,
      },
    ],
  }),

  validate() {
    return [];
  },

  prepare({ event, parameters, baseUrl }) {
    const link = flagLink(baseUrl, event);
    const custom = parseCustomHeaders(parameter(parameters, 'customHeaders'));
    const card = {
      themeColor: '0076D7',
      summary: 'Message',
      sections: [
        {
          activityTitle: plainSummary(event),
          activitySubtitle: 'Vexil notification update',
          facts: [
            { name: 'User', value: event.createdBy },
            { name: 'Action', value: event.type },
          ],
        },
      ],
      ...(link === undefined
        ? {}
        : { potentialAction: [{ '@type': 'OpenUri', name: 'Go to flag', targets: [{ os: 'default', uri: link }] }] }),
    };
    return {
      requests: [{ url: parameters.url!, contentType: 'application/json', headers: custom.headers, body: JSON.stringify(card) }],
      problems: custom.problems,
    };
  },
};
