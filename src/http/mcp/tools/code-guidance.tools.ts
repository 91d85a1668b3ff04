import { Type } from '@sinclair/typebox';
import {
  assessChange,
  languageOfFile,
  RISK_LEVELS,
  WRAP_LANGUAGES,
  wrapSnippet,
  type WrapLanguage,
} from '../../../domain/agents/code-guidance.js';
import { searchFeatures } from '../../../domain/search/feature-search.js';

import { args, CodeContext, FeatureName, Files, type McpTool, tool, type ToolCall } from './tool.js';

/** Flag names a code excerpt checks: isEnabled('x'), useFlag("x"), getBooleanValue('x', …), is_enabled("x"), IsEnabled("x"). */
function flagNamesIn(code: string): string[] {
  const names = [
    ...code.matchAll(
      /(?:isEnabled|useFlag|useVariant|getVariant|getBooleanValue|getStringValue|getNumberValue|getObjectValue|is_enabled|IsEnabled)\s*\(\s*["'`]([A-Za-z0-9~_.-]{1,100})["'`]/g,
    ),
  ];
  return [...new Set(names.map((match) => match[1]!))].slice(0, 20);
}

/** Flags an excerpt of code or a description points at that exist and the caller may see. */
async function existingFlags(call: ToolCall, description: string, codeContext: string | undefined) {
  const named = codeContext ? flagNamesIn(codeContext) : [];
  const found = new Map<string, { name: string; project: string; description: string | null; matchedBy: string }>();
  if (named.length > 0) {
    const { features } = await searchFeatures(call.deps.db, { query: named.join(' '), limit: '50' }, call.actor, call.deps.clock.now());
    for (const feature of features.filter((f) => named.includes(f.name))) {
      found.set(feature.name, { name: feature.name, project: feature.project, description: feature.description, matchedBy: 'code' });
    }
  }
  const words = description
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 3)
    .slice(0, 5);
  for (const word of words) {
    const { features } = await searchFeatures(call.deps.db, { query: word, limit: '5' }, call.actor, call.deps.clock.now());
    for (const feature of features) {
      if (!found.has(feature.name)) {
        found.set(feature.name, { name: feature.name, project: feature.project, description: feature.description, matchedBy: `"${word}"` });
      }
    }
  }
  return [...found.values()].slice(0, 10);
}

/** The tools that guide a coding agent: whether a change needs a flag, which flags exist for it, and the code to check one. */
export const CODE_GUIDANCE_TOOLS: McpTool[] = [
  tool({
    name: 'detect_flag',
    title: 'Find existing flags',
    description:
      'Before creating a flag: flags that already exist for this change, found by name, description, or the flag checks in the code around it.',
    input: args({
      description: Type.String({ minLength: 1, maxLength: 2000, description: 'The change or feature to find flags for' }),
      files: Files,
      codeContext: CodeContext,
    }),
    effect: 'read',
    access: { permission: 'READ' },
    async run({ description, codeContext }, call) {
      const candidates = await existingFlags(call, description, codeContext);
      return {
        text:
          candidates.length === 0
            ? 'No existing flag matches: create one with create_flag.'
            : `Existing flags that may cover this change (reuse one rather than creating a duplicate):\n${candidates.map((c) => `${c.name} [${c.project}] matched by ${c.matchedBy}${c.description ? `: ${c.description}` : ''}`).join('\n')}`,
        structured: { candidates },
      };
    },
  }),
  tool({
    name: 'evaluate_change',
    title: 'Should this change be behind a flag?',
    description: 'Judges whether a code change belongs behind a flag and which type, and names flags the code around it already uses.',
    input: args({
      repository: Type.Optional(Type.String({ maxLength: 500 })),
      branch: Type.Optional(Type.String({ maxLength: 500 })),
      files: Files,
      description: Type.Optional(Type.String({ maxLength: 2000, description: 'What the change does' })),
      riskLevel: Type.Optional(
        Type.Union(
          RISK_LEVELS.map((level) => Type.Literal(level)),
          { description: 'Your judgement of its risk' },
        ),
      ),
      codeContext: CodeContext,
    }),
    effect: 'read',
    access: { permission: 'READ' },
    async run({ files, description, riskLevel, codeContext }, call) {
      const assessment = assessChange({ description: description ?? '', ...(files ? { files } : {}), ...(riskLevel ? { riskLevel } : {}) });
      const parentFlags = codeContext ? await existingFlags(call, '', codeContext) : [];
      const next = assessment.needsFlag
        ? `Recommended: a ${assessment.flagType} flag${assessment.suggestedName ? ` such as "${assessment.suggestedName}"` : ''}. Next: detect_flag, then create_flag, then wrap_change.`
        : 'No flag needed.';
      const parents = parentFlags.length
        ? ` The code already checks ${parentFlags.map((f) => f.name).join(', ')}: consider reusing it.`
        : '';
      return { text: `${assessment.reasons.join('; ')}. ${next}${parents}`, structured: { ...assessment, parentFlags } };
    },
  }),
  tool({
    name: 'wrap_change',
    title: 'Code to wrap a change in a flag',
    description: 'The code that checks a flag in your language and SDK (Node, React, Python, Go, Java, OpenFeature), with what to install.',
    input: args({
      flagName: FeatureName,
      language: Type.Optional(
        Type.Union(
          WRAP_LANGUAGES.map((language) => Type.Literal(language)),
          { description: 'Found from fileName when not given' },
        ),
      ),
      fileName: Type.Optional(Type.String({ maxLength: 500 })),
      codeContext: CodeContext,
      frameworkHint: Type.Optional(Type.String({ maxLength: 100, description: 'openfeature to use the OpenFeature SDK' })),
    }),
    effect: 'read',
    access: { permission: 'READ' },
    async run({ flagName, language, fileName, frameworkHint }, _call) {
      const chosen: WrapLanguage =
        language ??
        (frameworkHint?.toLowerCase().includes('openfeature') ? 'openfeature' : undefined) ??
        (fileName ? languageOfFile(fileName) : undefined) ??
        'node';
      const { install, code } = wrapSnippet(flagName, chosen);
      return { text: `Install: ${install}\n\n${code}`, structured: { flagName, language: chosen, install, code } };
    },
  }),
];
