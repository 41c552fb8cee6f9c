/**
 * The API reference: the OpenAPI 3.1 document at /api/openapi.json and the
 * interactive page at /api/docs. Both are raw routes, not interfaces: tools
 * read the document as it is, outside the response envelope.
 */
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { buildOpenApiDocument, type OpenApiDocument } from '../../core/roles/gateway/openapi.js';
import { z } from 'zod';
import { toGatewayError } from '../../core/interfaces/errors.js';
import type { InterfaceDefinition } from '../../core/interfaces/registry.js';

export const OPENAPI_DOCUMENT_PATH = '/api/openapi.json';
export const API_DOCS_PATH = '/api/docs';

const DESCRIPTION = [
  'The HTTP interfaces of the CNC machine gateway, generated from its interface registry.',
  'GET interfaces take their input from the query string (lists comma-separated), POST interfaces from a JSON body.',
  'Success answers `{"errorCode": 0, "errorMsg": "OK", "data": …}`; failure answers `{errorCode, errorMsg, hint}` with the HTTP status of the error table.',
].join('\n\n');

export const openapiPlugin = definePlugin<GatewayContext>({
  name: 'openapi',
  dependsOn: ['gateway-api'],
  async register(ctx) {
    let cached: OpenApiDocument | undefined;
    // Built on first request, when every plugin has defined its interfaces, whatever the boot order.
    const openApiDocument = (): OpenApiDocument => {
      if (!cached) {
        cached = buildOpenApiDocument(ctx.interfaces.list(), { title: 'CNC machine gateway', version: ctx.version, description: DESCRIPTION });
        for (const [path, item] of Object.entries(cached.paths)) {
          const problem = item.get?.['x-schema-error'] ?? item.post?.['x-schema-error'];
          if (problem) ctx.logger.warn({ path, problem }, 'interface schema shown as "any" in the OpenAPI document');
        }
      }
      return cached;
    };

    // One encapsulated scope for both: the swagger decorators and the UI's hooks stay off the gateway's
    // other routes, and a hook added here (e.g. the IP white list) covers exactly the documentation routes.
    // The documentation is public (no credentials) but, like every /api path, subject to the IP white list.
    const docsAsPublicInterface: InterfaceDefinition = {
      path: API_DOCS_PATH,
      method: 'GET',
      summary: 'API reference',
      permission: null,
      input: z.object({}),
      output: z.null(),
      errors: [],
      handler: () => null,
    };
    await ctx.http.register(async (scope) => {
      scope.addHook('onRequest', async (request, reply) => {
        try {
          await ctx.interfaces.accessPolicy.authenticate(
            { headers: request.headers, sourceIp: request.ip, path: request.url.split('?')[0] ?? request.url },
            docsAsPublicInterface,
          );
        } catch (err) {
          const error = toGatewayError(err);
          return reply.code(error.httpStatus).send({ ...error.toBody(), hint: error.hint });
        }
      });
      scope.get(OPENAPI_DOCUMENT_PATH, (_request, reply) => reply.type('application/json; charset=utf-8').send(openApiDocument()));
      // Static mode wants a document now; the real one is swapped in per request by transformSpecification.
      await scope.register(fastifySwagger, {
        mode: 'static',
        specification: { document: { openapi: '3.0.3', info: { title: 'CNC machine gateway', version: ctx.version }, paths: {} } },
      });
      await scope.register(fastifySwaggerUi, {
        routePrefix: API_DOCS_PATH,
        transformSpecification: () => openApiDocument(),
        transformSpecificationClone: false,
        // No validator badge: it is an image from validator.swagger.io, which the page policy does not load (core/http/response-headers.ts).
        uiConfig: { deepLinking: true, docExpansion: 'list', tryItOutEnabled: false, validatorUrl: null },
      });
    });
  },
});
