/**
 * What the gateway is, for the public product details and the license
 * information: an open-source community build with nothing gated and no
 * limits. Nothing here is invented: where there is no value (a vendor, a
 * homepage), the field is null.
 */
import { SYSTEM } from '../../core/roles/gateway/contract/system.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';

export const PRODUCT_NAME = 'CNC machine gateway';
export const LICENSE = 'Apache-2.0';

/** The HTTP API served under /api. Its paths carry no version prefix; this is its first and only version. */
const HTTP_API = { api: 'http', version: '1', basePath: '/api' } as const;

/**
 * Capabilities of this build. All of them are in every installation: the
 * license gates none of them.
 */
const FEATURES = ['machine-fleet', 'derived-state', 'history', 'http-api'] as const;

export function defineProductInterfaces(ctx: GatewayContext): void {
  ctx.interfaces.implement(SYSTEM.productDetails, {
    handler: () => ({
      productName: PRODUCT_NAME,
      version: ctx.version,
      vendor: null,
      homepage: null,
      license: LICENSE,
      apiVersions: [{ ...HTTP_API }],
    }),
  });

  ctx.interfaces.implement(SYSTEM.licenseInfo, {
    handler: () => ({
      license: LICENSE,
      edition: 'community',
      machineLimit: null,
      expires: null,
      features: [...FEATURES],
    }),
  });
}
