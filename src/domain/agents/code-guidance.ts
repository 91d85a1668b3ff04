import type { FeatureType } from '../features/feature-types.js';

// What an agent writing code asks before and after it touches a flag: whether a change belongs behind one, the code
// that checks it in the project's language, and how to take the flag out again. Plain knowledge, no state.

export const RISK_LEVELS = ['low', 'medium', 'high', 'critical'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

export interface ChangeDescription {
  description?: string;
  files?: string[];
  riskLevel?: RiskLevel;
}

export interface ChangeAssessment {
  needsFlag: boolean;
  flagType: FeatureType | null;
  reasons: string[];
  suggestedName: string | null;
}

/** Words in a description that say what kind of change it is, checked in this order (the first kind found decides). */
const SIGNALS: Array<{ type: FeatureType; words: RegExp; reason: string }> = [
  {
    type: 'kill-switch',
    words: /\b(outage|fallback|circuit|degrad|disable quickly|kill.?switch|third.?party|external (api|service))/i,
    reason: 'it depends on something that can fail in production, so it needs a way to turn it off at once',
  },
  {
    type: 'experiment',
    words: /\b(a\/b|experiment|variant|conversion|test which|compare)/i,
    reason: 'it compares alternatives, which an experiment flag with variants measures',
  },
  {
    type: 'permission',
    words: /\b(beta users?|premium|plan|entitle|only for (admins|customers)|early access)/i,
    reason: 'it is for some users only, which a permission flag expresses',
  },
  {
    type: 'operational',
    words: /\b(migrat|performance|cache|queue|rate.?limit|infrastructure|database|schema|config)/i,
    reason: 'it changes how the system runs rather than what users see',
  },
  {
    type: 'release',
    words: /\b(feature|new|redesign|rewrite|refactor|checkout|payment|auth|login|sign.?in|ui|page|endpoint|api)/i,
    reason: 'it changes behaviour users rely on, so rolling it out gradually limits the damage of a mistake',
  },
];

/** Changes that never need a flag: they cannot change what a running system does. */
const HARMLESS_FILES = /(\.md|\.txt|\.mdx|(^|\/)(docs?|test|tests|__tests__|spec)\/|\.test\.|\.spec\.|(^|\/)(README|CHANGELOG|LICENSE))/i;

/** A flag name from a description: the first few words, lower-case, joined by dashes. */
export function suggestFlagName(description: string): string | null {
  const words = description
    .toLowerCase()
    .replace(/[^a-z0-9\s-]/g, ' ')
    .split(/\s+/)
    .filter((word) => word.length > 2 && !['the', 'and', 'for', 'with', 'add', 'new', 'this', 'that', 'from', 'into'].includes(word))
    .slice(0, 4);
  return words.length === 0 ? null : words.join('-').slice(0, 100);
}

/** Whether a change belongs behind a flag, and which type, with the reasons an agent can repeat to its user. */
export function assessChange(change: ChangeDescription): ChangeAssessment {
  const files = change.files ?? [];
  const text = change.description ?? '';
  if (
    files.length > 0 &&
    files.every((file) => HARMLESS_FILES.test(file)) &&
    change.riskLevel !== 'high' &&
    change.riskLevel !== 'critical'
  ) {
    return { needsFlag: false, flagType: null, reasons: ['only documentation or tests change: nothing a user runs'], suggestedName: null };
  }
  const signal = SIGNALS.find((candidate) => candidate.words.test(text));
  const reasons: string[] = signal ? [signal.reason] : [];
  if (change.riskLevel === 'high' || change.riskLevel === 'critical') reasons.push(`its risk was judged ${change.riskLevel}`);
  if (files.length >= 10) reasons.push(`it touches ${files.length} files`);
  const needsFlag = reasons.length > 0 && change.riskLevel !== 'low';
  return {
    needsFlag,
    flagType: needsFlag ? (signal?.type ?? 'release') : null,
    reasons: needsFlag ? reasons : ['a small, low-risk change: ship it without a flag', ...reasons],
    suggestedName: needsFlag ? suggestFlagName(text) : null,
  };
}

export const WRAP_LANGUAGES = ['node', 'react', 'python', 'go', 'java', 'openfeature'] as const;
export type WrapLanguage = (typeof WRAP_LANGUAGES)[number];

/** The language a file is written in, for the code to wrap a change in it. */
export function languageOfFile(fileName: string): WrapLanguage | undefined {
  if (/\.(tsx|jsx)$/.test(fileName)) return 'react';
  if (/\.(ts|js|mjs|cjs)$/.test(fileName)) return 'node';
  if (/\.py$/.test(fileName)) return 'python';
  if (/\.go$/.test(fileName)) return 'go';
  if (/\.(java|kt)$/.test(fileName)) return 'java';
  return undefined;
}

/** The code that checks `flag` in `language` with Unleash's SDK for it (which Vexil serves), and how to install it. */
export function wrapSnippet(flag: string, language: WrapLanguage): { install: string; code: string } {
  const name = JSON.stringify(flag);
  switch (language) {
    case 'node':
      return {
        install: 'npm install unleash-client',
        code: `import { initialize } from 'unleash-client';\n\nconst unleash = initialize({ url: process.env.UNLEASH_URL + '/api', appName: 'my-app', customHeaders: { Authorization: process.env.UNLEASH_API_TOKEN } });\n\nif (unleash.isEnabled(${name}, { userId })) {\n  // the new code path\n} else {\n  // the current code path\n}`,
      };
    case 'react':
      return {
        install: 'npm install @unleash/proxy-client-react unleash-proxy-client',
        code: `import { useFlag } from '@unleash/proxy-client-react';\n\nexport function Feature() {\n  const enabled = useFlag(${name});\n  return enabled ? <NewComponent /> : <CurrentComponent />;\n}`,
      };
    case 'python':
      return {
        install: 'pip install UnleashClient',
        code: `from UnleashClient import UnleashClient\n\nclient = UnleashClient(url=UNLEASH_URL + "/api", app_name="my-app", custom_headers={"Authorization": UNLEASH_API_TOKEN})\nclient.initialize_client()\n\nif client.is_enabled(${name}, {"userId": user_id}):\n    ...  # the new code path\nelse:\n    ...  # the current code path`,
      };
    case 'go':
      return {
        install: 'go get github.com/Unleash/unleash-client-go/v4',
        code: `if unleash.IsEnabled(${name}, unleash.WithContext(context.Context{UserId: userID})) {\n\t// the new code path\n} else {\n\t// the current code path\n}`,
      };
    case 'java':
      return {
        install: 'io.getunleash:unleash-client-java (Maven or Gradle)',
        code: `UnleashContext context = UnleashContext.builder().userId(userId).build();\nif (unleash.isEnabled(${name}, context)) {\n    // the new code path\n} else {\n    // the current code path\n}`,
      };
    case 'openfeature':
      return {
        install: 'npm install @openfeature/server-sdk @openfeature/ofrep-provider',
        code: `import { OpenFeature } from '@openfeature/server-sdk';\nimport { OFREPProvider } from '@openfeature/ofrep-provider';\n\nawait OpenFeature.setProviderAndWait(new OFREPProvider({ baseUrl: process.env.VEXIL_URL, headers: [['Authorization', process.env.VEXIL_CLIENT_TOKEN]] }));\nconst client = OpenFeature.getClient();\n\nif (await client.getBooleanValue(${name}, false, { targetingKey: userId })) {\n  // the new code path\n} else {\n  // the current code path\n}`,
      };
  }
}

/** How to take a flag out of the code, keeping the path it settled on, before the flag is archived. */
export function cleanupSteps(flag: string, keep: 'enabled' | 'disabled' | undefined, files: string[]): string[] {
  const where = files.length > 0 ? `in ${files.join(', ')}` : 'across the repository';
  const kept =
    keep === undefined
      ? 'Ask the user which path won (the code run when the flag is on, or off) before changing anything.'
      : `Keep the code that runs when the flag is ${keep === 'enabled' ? 'on' : 'off'}; delete the other branch.`;
  return [
    `Search ${where} for ${JSON.stringify(flag)} (isEnabled, useFlag, getBooleanValue, is_enabled, IsEnabled and constants holding the name); for TypeScript, JavaScript and Python, get_flag_cleanup_patch writes the patch from the files you send it.`,
    kept,
    'Remove the flag check itself, then imports, helpers and tests that only served the removed path.',
    'Run the tests and the linter; nothing may still refer to the flag.',
    `When the code is merged and deployed, archive the flag: call cleanup_flag again with archive: true.`,
  ];
}
