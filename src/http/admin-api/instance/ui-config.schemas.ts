import { Type } from '@sinclair/typebox';
import { StrictObject } from '../../common.schemas.js';

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

const Count = Type.Integer({ minimum: 0 });

export const InstanceAdminStatsSchema = Type.Object(
  {
    timestamp: Type.String({ format: 'date-time' }),
    instanceId: Type.String(),
    versionOSS: Type.String({ description: "Vexil's version" }),
    versionEnterprise: Type.String(),
    users: Count,
    serviceAccounts: Count,
    apiTokens: Type.Record(Type.String(), Count, { description: 'API tokens by type' }),
    activeUsers: Type.Object({ last7: Count, last30: Count, last60: Count, last90: Count }),
    licensedUsers: Count,
    readOnlyUsers: Count,
    featureToggles: Count,
    archivedFeatureToggles: Count,
    projects: Count,
    contextFields: Count,
    roles: Count,
    customRootRoles: Count,
    customRootRolesInUse: Count,
    groups: Count,
    environments: Count,
    segments: Count,
    strategies: Count,
    SAMLenabled: Type.Boolean(),
    OIDCenabled: Type.Boolean(),
    passwordAuthEnabled: Type.Boolean(),
    SCIMenabled: Type.Boolean(),
    clientApps: Type.Array(Type.Object({ range: Type.String(), count: Count })),
    featureExports: Count,
    featureImports: Count,
    productionChanges: Type.Object({ last30: Count, last60: Count, last90: Count }),
    previousDayMetricsBucketsCount: Type.Object({ enabledCount: Count, variantCount: Count }),
    maxEnvironmentStrategies: Count,
    maxConstraints: Count,
    maxConstraintValues: Count,
    releaseTemplates: Count,
    releasePlans: Count,
    edgeInstanceUsage: Type.Record(Type.String(), Count),
    sum: Type.String({ description: 'SHA-256 of the instance id and the figures a licence depends on' }),
  },
  { $id: 'instanceAdminStatsSchema' },
);

export const uiConfigSchemas = [
  UiConfigSchema,
  SetCorsSchema,
  MaintenanceSchema,
  TelemetrySettingsSchema,
  RecordUiErrorSchema,
  InstanceAdminStatsSchema,
];
