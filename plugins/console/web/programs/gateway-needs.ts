/**
 * The interfaces of a remote gateway the program service calls (its link,
 * core/gateway-link/calling-link.ts), for the Gateways page to name them: a secret
 * key's user must be allowed every one (an administrator is). A test keeps
 * this list equal to the link's.
 */
export const GATEWAY_INTERFACES_NEEDED: readonly { path: string; why: string }[] = [
  { path: '/api/system/gateway-info', why: 'who the gateway is, checked before anything is sent to its address' },
  { path: '/api/config/machines', why: 'its machines' },
  { path: '/api/config/groups', why: 'its machine groups' },
  { path: '/api/cnc/readProgramList', why: 'the files on a machine (the mirror)' },
  { path: '/api/file/program/upload', why: 'sending a program' },
  { path: '/api/file/program/download', why: 'reading it back to verify it' },
  { path: '/api/file/program/fences', why: 'fencing a deployment another instance took over, so that its former holder is refused' },
  { path: '/api/cnc/readCurrentProgram', why: 'what a machine runs' },
  { path: '/api/file/program/capabilities', why: 'what a machine can take, checked before sending' },
  { path: '/api/history/machine', why: 'cycles and alarms that judge a trial' },
];
