import { Type } from '@sinclair/typebox';
import { StrictObject } from './common.schemas.js';

export const UiConfigSchema = Type.Object(
  {
    name: Type.String(),
    version: Type.String(),
    baseUriPath: Type.String(),
    frontendApiOrigins: Type.Array(Type.String()),
    maintenanceMode: Type.Boolean(),
  },
  { $id: 'uiConfigSchema' },
);

export const SetCorsSchema = StrictObject(
  { frontendApiOrigins: Type.Array(Type.String({ maxLength: 500 }), { maxItems: 100 }) },
  { $id: 'setCorsSchema' },
);

export const MaintenanceSchema = StrictObject({ enabled: Type.Boolean() }, { $id: 'maintenanceSchema' });

export const TelemetrySettingsSchema = Type.Object(
  { versionInfoCollectionEnabled: Type.Boolean(), featureInfoCollectionEnabled: Type.Boolean() },
  { $id: 'telemetrySettingsSchema' },
);

export const RecordUiErrorSchema = StrictObject(
  { errorMessage: Type.String({ maxLength: 2000 }), errorStack: Type.Optional(Type.String({ maxLength: 20_000 })) },
  { $id: 'recordUiErrorSchema' },
);

export const uiConfigSchemas = [UiConfigSchema, SetCorsSchema, MaintenanceSchema, TelemetrySettingsSchema, RecordUiErrorSchema];
