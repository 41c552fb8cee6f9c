/** The server instructions sent in the `initialize` result (GW-34): part of the tool catalogue, the same wherever the tools are served. */
import { ERRORS, type ErrorName } from '../interfaces/errors.js';
import { TIME_PARAM_FORMS } from '../interfaces/time-params.js';

const COMMON_ERRORS: ErrorName[] = [
  'GENERAL_MACHINE_ID_NOT_EXISTED',
  'GENERAL_GROUP_ID_NOT_EXISTED',
  'TASK_NOT_READY',
  'TASK_NOT_ENABLED',
  'MACHINE_NOT_CONNECTED',
  'DRIVER_FAMILY_UNSUPPORTED',
  'DRIVER_TIMEOUT',
  'INVALID_PARAMETER',
  'FORBIDDEN',
];

function formsText(): string {
  return TIME_PARAM_FORMS.split('; ')
    .map((form) => `- ${form}`)
    .join('\n');
}

export function serverInstructions(docsUrl: string): string {
  return [
    'CNC machine gateway: read-only tools over a fleet of CNC machines.',
    '',
    'Recommended call order: list_machines → get_fleet_status → read_machine / analyze / query_history. machineIDs come from list_machines, groupIDs from list_groups; where a tool takes machineID or groupID, give exactly one.',
    '',
    'Time parameters (start, end) are resolved in the gateway time zone; end defaults to now. Accepted forms:',
    formsText(),
    '',
    'Derived machine state (get_fleet_status, read_task_data CNCStatus):',
    '- running: executing a program.',
    '- idle: not executing (AUTO mode, stopped, reset or feed hold).',
    '- alarm: emergency stop or an active alarm.',
    '- setup: manual mode (MANUAL, JOG, HANDLE, MDI, EDIT, REF) and not executing.',
    '- offline: the connection is down and the cached status is stale (statusStale=true).',
    '- noData: the status task is not enabled, or no current status has been sampled.',
    '- inactive: the machine is deactivated in the gateway.',
    'Each state comes with a reason naming the rule and the signals behind it.',
    '',
    'Tool errors read "{interface path} failed: {NAME}({errorCode}) {description}. Hint: {next step}". Common ones:',
    ...COMMON_ERRORS.map((name) => `- ${name}(${ERRORS[name].code}): ${ERRORS[name].description} ${ERRORS[name].hint}`),
    'In composite tools (get_fleet_status, read_machine, get_system_info) a failed section is reported under errors (or statusError / connection.error), starting "Forbidden:" when you are not authorised for that interface; the other sections still return.',
    '',
    `Reference: ${docsUrl}`,
  ].join('\n');
}
