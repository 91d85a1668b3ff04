import { flagLink, parameter, parseCustomHeaders, plainSummary, providerDefinition, type AddonProvider } from './provider.js';

export const SLACK_TAG_TYPE = 'slack';

/** Slack's mrkdwn: single asterisks for bold, and only &, < and > escaped. */
function slackText(summary: string): string {
  return summary.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\*\*/g, '*');
}

/**
 * Posts to a Slack incoming webhook, as Unleash's Slack addon does: one message per channel named by the flag's
 * `slack` tags, or to the default channel when it has none.
 */
export const slackProvider: AddonProvider = {
  definition: providerDefinition({
    name: 'slack',
    displayName: 'Slack',
    description: 'Posts the events of Vexil to Slack channels.',
    documentationUrl: 'https://docs.getunleash.io/reference/integrations/slack',
    howTo:
      'Create an incoming webhook in Slack and paste its URL. Tag a flag with slack:<channel> to post its events to that channel instead of the default one.',
    parameters: [
      {
        name: 'url',
        displayName: 'Slack webhook URL',
        type: 'url',
        description: '(Required) The incoming webhook URL Slack gave you.',
        required: true,
        sensitive: true,
      },
      {
        name: 'username',
        displayName: 'Username',
        type: 'text',
        placeholder: 'Vexil',
        description: '(Optional) The name the messages are posted under. Defaults to "Vexil".',
        required: false,
        sensitive: false,
      },
      {
        name: 'emojiIcon',
        displayName: 'Emoji icon',
        type: 'text',
        placeholder: ':triangular_flag_on_post:',
        description: '(Optional) The emoji shown as the sender\'s icon. Defaults to ":triangular_flag_on_post:".',
        required: false,
        sensitive: false,
      },
      {
        name: 'defaultChannel',
        displayName: 'Default channel',
        type: 'text',
        description: '(Required) The channel for events of flags without a slack tag.',
        required: true,
        sensitive: false,
      },
    ],
    tagTypes: [{ name: SLACK_TAG_TYPE, description: "Slack channel the Slack integration posts this flag's events to", icon: 'S' }],
  }),

  validate() {
    return [];
  },

  prepare({ event, parameters, baseUrl }) {
    const tagged = event.tags.filter((tag) => tag.type === SLACK_TAG_TYPE).map((tag) => tag.value.replace(/^#/, ''));
    const channels = tagged.length > 0 ? [...new Set(tagged)] : [parameter(parameters, 'defaultChannel')!.replace(/^#/, '')];
    const link = flagLink(baseUrl, event);
    const custom = parseCustomHeaders(parameter(parameters, 'customHeaders'));
    const message = {
      username: parameter(parameters, 'username') ?? 'Vexil',
      icon_emoji: parameter(parameters, 'emojiIcon') ?? ':triangular_flag_on_post:',
      text: slackText(plainSummary(event)),
      ...(link === undefined
        ? {}
        : {
            attachments: [
              {
                actions: [
                  { name: 'featureToggle', text: 'Open in Vexil', type: 'button', value: 'featureToggle', style: 'primary', url: link },
                ],
              },
            ],
          }),
    };
    return {
      requests: channels.map((channel) => ({
        url: parameters.url!,
        contentType: 'application/json',
        headers: custom.headers,
        body: JSON.stringify({ ...message, channel: `#${channel}` }),
      })),
      problems: custom.problems,
      extraDetails: { channels },
    };
  },
};
