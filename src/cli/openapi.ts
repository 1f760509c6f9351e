/**
 * `oas openapi` (issue 36): the OpenAPI 3.1 document of the HTTP API on standard output, the one
 * `GET {prefix}openapi.json` serves, for CI pipelines and code generators. Its prefix is the
 * configuration's api_prefix (--config, $OAS_CONFIG, ./oas.config.json, OAS_API_PREFIX), or
 * --prefix. Loads the configuration and the API's schemas with their converter only: no server,
 * no storage.
 */
import { loadConfig } from '../config/load.js';
import { EXIT_OK } from './errors.js';

export interface OpenApiOptions {
  prefix?: string;
  config?: string;
}

export async function openapiCommand(options: OpenApiOptions): Promise<number> {
  const { config } = loadConfig({ file: options.config, flags: options.prefix === undefined ? {} : { api_prefix: options.prefix } });
  const { openApiDocument } = await import('../server/openapi.js');
  // A reader that goes away (`oas openapi | head`) is no error: main.ts's quietOnClosedStdout.
  await new Promise<void>((resolve) => process.stdout.write(`${JSON.stringify(openApiDocument(config.api_prefix), null, 2)}\n`, () => resolve()));
  return EXIT_OK;
}
