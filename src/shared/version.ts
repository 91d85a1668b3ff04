/** Vexil's version, as the OpenAPI document and the admin UI's configuration report it. */
export const VERSION = '0.1.0';
