import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, StrictObject } from './common.schemas.js';

export const UserSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Nullable(Type.String()),
    email: Nullable(Type.String()),
    username: Nullable(Type.String()),
    imageUrl: Nullable(Type.String()),
    rootRole: Type.Integer({ description: 'Root role id: 1 Admin, 2 Editor, 3 Viewer' }),
    createdAt: Nullable(DateTime),
    seenAt: Nullable(DateTime),
    loginAttempts: Type.Integer(),
    isAPI: Type.Boolean(),
    accountType: Type.String(),
    scimId: Nullable(Type.String({ description: 'The SCIM id of the user, only present if managed by SCIM' })),
    deactivatedAt: Nullable(
      Type.String({ format: 'date-time', description: 'When the user was deactivated (SCIM active: false); null while active' }),
    ),
  },
  { $id: 'userSchema' },
);

export const RoleSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    type: Type.String({ description: 'root or project (built in), root-custom or custom' }),
    description: Nullable(Type.String()),
    project: Type.Optional(Nullable(Type.String())),
  },
  { $id: 'roleSchema' },
);

export const UsersSchema = Type.Object(
  { users: Type.Array(Type.Ref(UserSchema)), rootRoles: Type.Array(Type.Ref(RoleSchema)) },
  { $id: 'usersSchema' },
);

export const UsersSearchSchema = Type.Array(Type.Ref(UserSchema), { $id: 'usersSearchSchema', description: 'At most 100 people, by id' });

export const UsersSearchQuery = Type.Object({
  q: Type.Optional(Type.String({ maxLength: 100, description: 'Text found in the name, username or email, case-insensitively' })),
});

const Username = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^\\S+$',
  errorMessage: 'A username is 1 to 100 characters without spaces',
});
const Email = Type.String({ format: 'email', maxLength: 255, errorMessage: 'email must be a valid email address' });
const PersonName = Type.String({ maxLength: 255 });
const RootRole = Type.Union([Type.String({ minLength: 1 }), Type.Integer()], {
  errorMessage: 'rootRole must be a role name (Admin, Editor, Viewer) or its id (1, 2, 3)',
});

export const CreateUserSchema = StrictObject(
  {
    username: Type.Optional(Username),
    email: Type.Optional(Email),
    name: Type.Optional(PersonName),
    password: Type.Optional(Type.String()),
    rootRole: RootRole,
    sendEmail: Type.Optional(Type.Boolean({ description: 'Accepted for compatibility; Vexil sends no email' })),
  },
  { $id: 'createUserSchema' },
);

export const CreateUserResponseSchema = Type.Composite([UserSchema, Type.Object({ emailSent: Type.Boolean() })], {
  $id: 'createUserResponseSchema',
});

export const UpdateUserSchema = StrictObject(
  { name: Type.Optional(PersonName), email: Type.Optional(Email), rootRole: Type.Optional(RootRole) },
  { $id: 'updateUserSchema' },
);

export const PasswordSchema = StrictObject({ password: Type.String() }, { $id: 'passwordSchema' });

export const ChangeOwnPasswordSchema = StrictObject(
  { oldPassword: Type.String({ minLength: 1 }), password: Type.String(), confirmPassword: Type.String() },
  { $id: 'changePasswordSchema' },
);

export const MeSchema = Type.Object(
  {
    user: Type.Ref(UserSchema),
    // A permission without `project` comes from the root role; with one, from a role in that project.
    // With `environment` too when a project role holds it in that environment only.
    permissions: Type.Array(
      Type.Object({ permission: Type.String(), project: Type.Optional(Type.String()), environment: Type.Optional(Type.String()) }),
    ),
    feedback: Type.Array(Type.Unknown()),
    splash: Type.Record(Type.String(), Type.Boolean()),
  },
  { $id: 'meSchema' },
);

export const InactiveUsersSchema = Type.Object(
  {
    version: Type.Literal(1),
    inactiveUsers: Type.Array(
      Type.Object({
        id: Type.Integer(),
        name: Nullable(Type.String()),
        email: Nullable(Type.String()),
        username: Nullable(Type.String()),
        seenAt: Nullable(DateTime),
        createdAt: DateTime,
      }),
    ),
  },
  { $id: 'inactiveUsersSchema' },
);

export const IdsSchema = StrictObject({ ids: Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 1000 }) }, { $id: 'idsSchema' });

export const ResetTokenUserSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.Optional(Type.String()),
    email: Type.String(),
    token: Type.String(),
    createdBy: Type.String(),
    role: Type.Object({ id: Type.Integer(), name: Type.String(), type: Type.String() }),
  },
  { $id: 'tokenUserSchema' },
);

export const ResetPasswordSchema = StrictObject(
  { token: Type.String({ minLength: 1, maxLength: 200 }), password: Type.String({ maxLength: 1000 }) },
  { $id: 'resetPasswordWithTokenSchema' },
);

export const ResetEmailRequestSchema = StrictObject(
  { email: Type.String({ minLength: 3, maxLength: 254, format: 'email' }) },
  { $id: 'emailSchema' },
);

export const ResetLinkRequestSchema = StrictObject({ id: Type.String({ minLength: 1, maxLength: 254 }) }, { $id: 'idSchema' });

export const ResetLinkSchema = Type.Object({ resetPasswordUrl: Type.String({ format: 'uri' }) }, { $id: 'resetPasswordSchema' });

export const AdminCountSchema = Type.Object(
  { password: Type.Integer(), noPassword: Type.Integer(), service: Type.Integer() },
  { $id: 'adminCountSchema', description: 'Active Admins (by their own root role) with a password, without one, and service accounts' },
);

export const ProfileSchema = Type.Object(
  {
    rootRole: Type.Ref(RoleSchema),
    projects: Type.Array(Type.String(), { description: 'The projects where the person holds a role, their own or a group’s' }),
    groups: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String(), description: Nullable(Type.String()) })),
    subscriptions: Type.Array(Type.String(), { description: 'Email reports the person receives: Vexil sends none' }),
    features: Type.Array(Type.Never(), { description: 'Deprecated in Unleash: always empty' }),
    canChangePassword: Type.Boolean(),
  },
  { $id: 'profileSchema' },
);

const UiItemId = Type.String({ minLength: 1, maxLength: 100 });

export const FeedbackSchema = Type.Object(
  { userId: Type.Integer(), feedbackId: Type.String(), neverShow: Type.Boolean(), given: Nullable(DateTime) },
  { $id: 'feedbackResponseSchema' },
);

export const CreateFeedbackSchema = StrictObject(
  { feedbackId: UiItemId, neverShow: Type.Optional(Type.Boolean()) },
  { $id: 'feedbackCreateSchema' },
);

export const UpdateFeedbackSchema = StrictObject(
  { userId: Type.Optional(Type.Integer()), neverShow: Type.Optional(Type.Boolean()), given: Type.Optional(Nullable(DateTime)) },
  { $id: 'feedbackUpdateSchema' },
);

export const SplashSchema = Type.Object(
  { userId: Type.Integer(), splashId: Type.String(), seen: Type.Boolean() },
  { $id: 'splashResponseSchema' },
);

export const UiItemParams = Type.Object({ id: UiItemId });

export const LoginSchema = StrictObject(
  { username: Type.String({ minLength: 1 }), password: Type.String({ minLength: 1 }) },
  { $id: 'loginSchema' },
);

export const PatSchema = Type.Object(
  {
    id: Type.Integer(),
    description: Type.String(),
    expiresAt: DateTime,
    createdAt: DateTime,
    seenAt: Nullable(DateTime),
    userId: Type.Integer(),
    secret: Type.Optional(Type.String({ description: 'Shown once, in the creation response' })),
  },
  { $id: 'patSchema' },
);

export const PatsSchema = Type.Object({ pats: Type.Array(Type.Ref(PatSchema)) }, { $id: 'patsSchema' });

export const SessionSchema = Type.Object(
  {
    id: Type.Integer(),
    createdAt: DateTime,
    seenAt: { ...DateTime, description: 'When the session was last used, to the minute' },
    expiresAt: DateTime,
    address: Nullable(Type.String({ description: 'The address it was opened from' })),
    userAgent: Nullable(Type.String({ description: 'The browser it was opened with, as it named itself' })),
    current: Type.Boolean({ description: 'Whether it is the session this request came with' }),
  },
  { $id: 'sessionSchema' },
);

export const SessionsSchema = Type.Object({ sessions: Type.Array(Type.Ref(SessionSchema)) }, { $id: 'sessionsSchema' });

export const SessionsEndedSchema = Type.Object(
  { ended: Type.Integer({ description: 'How many open sessions were ended' }) },
  { $id: 'sessionsEndedSchema' },
);

export const SignOnSchema = Type.Object(
  {
    id: Type.Integer(),
    createdAt: DateTime,
    userId: Nullable(Type.Integer({ description: 'The user, when the name matched one' })),
    username: Nullable(Type.String({ description: 'What the person signed in as: the name typed, or the provider email' })),
    authType: Type.Union([Type.Literal('password'), Type.Literal('oidc'), Type.Literal('saml')]),
    successful: Type.Boolean(),
    failureReason: Nullable(Type.String()),
    ip: Nullable(Type.String()),
    userAgent: Nullable(Type.String()),
  },
  { $id: 'signOnSchema' },
);

export const SignOnsSchema = Type.Object({ signons: Type.Array(Type.Ref(SignOnSchema)), total: Type.Integer() }, { $id: 'signOnsSchema' });

export const SignOnsQuerySchema = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, errorMessage: 'limit must be a whole number from 1 to 1000' })),
  offset: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 10_000_000, errorMessage: 'offset must be a whole number from 0 to 10000000' }),
  ),
  userId: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, errorMessage: 'userId must be a user id' })),
});

export const OidcSettingsSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: 'Whether the provider is configured (OIDC_ISSUER, SAML_METADATA_URL)' }),
    autoCreate: Type.Boolean({ description: 'Whether a person the provider signs in for the first time becomes a user' }),
    defaultRootRole: Type.Union([Type.Literal('Admin'), Type.Literal('Editor'), Type.Literal('Viewer')]),
    emailDomains: Type.String({ description: 'Comma-separated email domains people must have; empty lets any in' }),
  },
  { $id: 'oidcSettingsSchema' },
);

export const UpdateOidcSettingsSchema = StrictObject(
  {
    autoCreate: Type.Optional(Type.Boolean()),
    defaultRootRole: Type.Optional(Type.String({ maxLength: 20 })),
    emailDomains: Type.Optional(Type.String({ maxLength: 10_000 })),
  },
  { $id: 'updateOidcSettingsSchema' },
);

export const CreatePatSchema = StrictObject(
  { description: Type.String({ minLength: 1, maxLength: 255 }), expiresAt: DateTime },
  { $id: 'createPatSchema' },
);

export const SignInOptionsSchema = Type.Object(
  {
    password: Type.Boolean({ description: 'Whether people may sign in with a username and password' }),
    oidc: Nullable(
      Type.Object({ name: Type.String(), path: Type.String() }, { description: 'The OpenID Connect provider to sign in with' }),
    ),
    saml: Type.Optional(
      Nullable(Type.Object({ name: Type.String(), path: Type.String() }, { description: 'The SAML identity provider to sign in with' })),
    ),
  },
  { $id: 'signInOptionsSchema' },
);

const inviteLinkFields = {
  id: Type.Integer({ description: 'Names the link in paths, as its secret does' }),
  name: Type.String(),
  enabled: Type.Boolean({ description: 'False once expired, whatever was set' }),
  expiresAt: DateTime,
  createdAt: DateTime,
  createdBy: Type.String(),
  role: Type.Object({ id: Type.Integer(), name: Type.String(), type: Type.Literal('root') }),
  users: Type.Array(Type.Ref(UserSchema), { description: 'The people who made their accounts through it' }),
};

export const InviteLinkSchema = Type.Object(inviteLinkFields, {
  $id: 'publicSignupTokenSchema',
  description: 'An invite link; its secret and address are shown only when it is made',
});

export const CreatedInviteLinkSchema = Type.Object(
  {
    ...inviteLinkFields,
    secret: Type.String({ description: 'Shown this once' }),
    url: Type.String({ format: 'uri', description: 'Where an invited person makes their account; shown this once' }),
  },
  { $id: 'createdPublicSignupTokenSchema' },
);

export const InviteLinksSchema = Type.Object({ tokens: Type.Array(Type.Ref(InviteLinkSchema)) }, { $id: 'publicSignupTokensSchema' });

export const CreateInviteLinkSchema = StrictObject(
  { name: Type.String({ minLength: 1, maxLength: 100 }), expiresAt: DateTime },
  { $id: 'publicSignupTokenCreateSchema' },
);

export const UpdateInviteLinkSchema = StrictObject(
  { expiresAt: Type.Optional(DateTime), enabled: Type.Optional(Type.Boolean()) },
  { $id: 'publicSignupTokenUpdateSchema' },
);

export const CreateInvitedUserSchema = StrictObject(
  { username: Type.Optional(Username), email: Email, name: PersonName, password: Type.String({ maxLength: 1000 }) },
  { $id: 'createInvitedUserSchema' },
);

/** The SCIM token, which an Admin makes and replaces here for the identity provider to use at /scim/v2. */
export const ScimTokenSchema = Type.Object(
  { token: Type.String({ description: 'The SCIM token, shown this once' }) },
  { $id: 'scimTokenSchema' },
);

export const ScimTokenStatusSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: 'Whether a SCIM token exists, so provisioning is on' }),
    createdAt: Nullable(DateTime),
    createdBy: Nullable(Type.String()),
    seenAt: Nullable(DateTime),
  },
  { $id: 'scimTokenStatusSchema' },
);

export const userSchemas = [
  ScimTokenSchema,
  ScimTokenStatusSchema,
  InviteLinkSchema,
  CreatedInviteLinkSchema,
  InviteLinksSchema,
  CreateInviteLinkSchema,
  UpdateInviteLinkSchema,
  CreateInvitedUserSchema,
  SignInOptionsSchema,
  UserSchema,
  RoleSchema,
  UsersSchema,
  UsersSearchSchema,
  CreateUserSchema,
  CreateUserResponseSchema,
  UpdateUserSchema,
  PasswordSchema,
  ChangeOwnPasswordSchema,
  MeSchema,
  ProfileSchema,
  AdminCountSchema,
  ResetTokenUserSchema,
  ResetPasswordSchema,
  ResetEmailRequestSchema,
  ResetLinkRequestSchema,
  ResetLinkSchema,
  InactiveUsersSchema,
  IdsSchema,
  FeedbackSchema,
  CreateFeedbackSchema,
  UpdateFeedbackSchema,
  SplashSchema,
  LoginSchema,
  PatSchema,
  PatsSchema,
  SessionSchema,
  SessionsSchema,
  SessionsEndedSchema,
  SignOnSchema,
  SignOnsSchema,
  OidcSettingsSchema,
  UpdateOidcSettingsSchema,
  CreatePatSchema,
];
