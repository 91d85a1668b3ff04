import { defineConfig } from 'vitepress';

// The documentation as a static site: `npm run docs:build` writes it to docs/.vitepress/dist (`npm run docs:dev`
// serves it with reload). The pages are the Markdown files of docs/, read as they are on GitHub too.
export default defineConfig({
  title: 'Vexil',
  description: "An open-source feature-flag server that speaks Unleash's API",
  cleanUrls: true,
  markdown: {
    // Inline code is shown as written: `{{event.featureName}}` (an integration's template) is not Vue's to fill in.
    config(md) {
      const codeInline = md.renderer.rules.code_inline!;
      md.renderer.rules.code_inline = (tokens, index, options, env, self) =>
        codeInline(tokens, index, options, env, self).replace(/^<code/, '<code v-pre');
    },
  },
  themeConfig: {
    outline: [2, 3],
    search: { provider: 'local' },
    sidebar: [
      {
        text: 'Start',
        items: [
          { text: 'Getting started', link: '/getting-started' },
          { text: 'Configuration', link: '/configuration' },
          { text: 'The admin UI', link: '/admin-ui' },
        ],
      },
      {
        text: 'Using Vexil',
        items: [
          { text: 'SDKs and OpenFeature', link: '/sdks' },
          { text: 'Change requests', link: '/change-requests' },
          { text: 'The event log and feature search', link: '/event-log-and-search' },
          { text: 'Integrations', link: '/integrations' },
          { text: 'Progressive delivery', link: '/progressive-delivery' },
          { text: 'Experiments', link: '/experiments' },
          { text: 'Coding agents (MCP)', link: '/mcp' },
          { text: 'Moving in from Unleash', link: '/moving-from-unleash' },
        ],
      },
      {
        text: 'Running Vexil',
        items: [
          { text: 'Operations', link: '/operations' },
          { text: 'Kubernetes', link: '/kubernetes' },
          { text: 'Vexil Edge', link: '/edge' },
          { text: 'Moving from Unleash Edge', link: '/moving-from-unleash-edge' },
          { text: 'Users and access', link: '/users-and-access' },
          { text: 'Company sign-in and provisioning', link: '/sso-and-scim' },
          { text: 'Security', link: '/SECURITY' },
          { text: 'What survives a crash', link: '/DURABILITY' },
          { text: 'Performance', link: '/PERFORMANCE' },
        ],
      },
      {
        text: 'Reference',
        items: [
          { text: 'The admin API', link: '/api' },
          { text: 'Architecture', link: '/ARCHITECTURE' },
        ],
      },
    ],
  },
});
