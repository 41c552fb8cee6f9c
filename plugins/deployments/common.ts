/** What the deployments plugin's files share besides the REST kit: the service as a principal. */
import { SERVICE_PRINCIPAL } from '../../core/rest/operation.js';

/** The service acting for itself (runners, pull-backs): it sees every machine. */
export const SYSTEM = SERVICE_PRINCIPAL;
