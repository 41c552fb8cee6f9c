/**
 * The interfaces of a remote gateway the program service calls (its link,
 * core/gateway-link/calls.ts), for the Gateways page to name them: a secret
 * key's user must be allowed every one (an administrator is). A test keeps
 * this list equal to the link's.
 */
export const GATEWAY_INTERFACES_NEEDED: readonly { path: string; why: string }[] = [
  { path: '/api/config/machines', why: 'its machines' },
  { path: '/api/config/groups', why: 'its machine groups' },
  { path: '/api/cnc/readProgramList', why: 'the files on a machine (the mirror)' },
  { path: '/api/file/program/upload', why: 'sending a program' },
  { path: '/api/file/program/download', why: 'reading it back to verify it' },
  { path: '/api/cnc/readCurrentProgram', why: 'what a machine runs' },
  { path: '/api/file/program/capabilities', why: 'what a machine can take, checked before sending' },
  { path: '/api/history/machine', why: 'cycles and alarms that judge a trial' },
];
