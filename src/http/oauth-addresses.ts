import { MCP_ENDPOINT } from './plugins/access.js';

/** The addresses of MCP's authorization (RFC 9728 and RFC 8414 metadata), built from the server's public address. */
export function oauthAddresses(baseUrl: string) {
  const issuer = baseUrl.replace(/\/$/, '');
  return {
    issuer,
    resource: `${issuer}${MCP_ENDPOINT}`,
    resourceMetadata: `${issuer}/.well-known/oauth-protected-resource${MCP_ENDPOINT}`,
    authorize: `${issuer}/oauth/authorize`,
    token: `${issuer}/oauth/token`,
    register: `${issuer}/oauth/register`,
  };
}
