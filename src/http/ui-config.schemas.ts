import { Type } from '@sinclair/typebox';
import { StrictObject } from './common.schemas.js';

export const UiConfigSchema = Type.Object(
  {
    name: Type.String(),
    version: Type.String(),
    baseUriPath: Type.String(),
    frontendApiOrigins: Type.Array(Type.String()),
  },
  { $id: 'uiConfigSchema' },
);

export const SetCorsSchema = StrictObject(
  { frontendApiOrigins: Type.Array(Type.String({ maxLength: 500 }), { maxItems: 100 }) },
  { $id: 'setCorsSchema' },
);

export const uiConfigSchemas = [UiConfigSchema, SetCorsSchema];
