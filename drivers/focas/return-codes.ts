/**
 * FOCAS return codes (the `short` every FOCAS function returns) and what each
 * means for the gateway. The bridge passes the code of the FOCAS call through
 * unchanged in `rc`, so a vendor's bridge needs no translation table of its own.
 */
import { GatewayError, type ErrorName } from '../../core/interfaces/errors.js';
import type { ItemFamily } from '../../core/driver-seam/driver.js';

/** The FOCAS return codes the protocol uses, under their FOCAS names. */
export const EW = {
  EW_PROTOCOL: -17,
  EW_SOCKET: -16,
  EW_NODLL: -15,
  EW_BUS: -11,
  EW_SYSTEM2: -10,
  EW_HSSB: -9,
  EW_HANDLE: -8,
  EW_VERSION: -7,
  EW_UNEXP: -6,
  EW_SYSTEM: -5,
  EW_PARITY: -4,
  EW_MMCSYS: -3,
  EW_RESET: -2,
  EW_BUSY: -1,
  EW_OK: 0,
  EW_FUNC: 1,
  EW_LENGTH: 2,
  EW_NUMBER: 3,
  EW_ATTRIB: 4,
  EW_DATA: 5,
  EW_NOOPT: 6,
  EW_PROT: 7,
  EW_OVRFLOW: 8,
  EW_PARAM: 9,
  EW_BUFFER: 10,
  EW_PATH: 11,
  EW_MODE: 12,
  EW_REJECT: 13,
  EW_DTSRVR: 14,
  EW_ALARM: 15,
  EW_STOP: 16,
  EW_PASSWD: 17,
} as const;
export type ReturnCodeName = keyof typeof EW;

const MEANING: Record<ReturnCodeName, string> = {
  EW_PROTOCOL: 'protocol error between library and CNC',
  EW_SOCKET: 'socket error: the CNC does not answer',
  EW_NODLL: 'no FOCAS library for this CNC series',
  EW_BUS: 'bus error',
  EW_SYSTEM2: 'system error',
  EW_HSSB: 'HSSB communication error',
  EW_HANDLE: 'invalid or expired handle',
  EW_VERSION: 'CNC/PMC version does not match the library',
  EW_UNEXP: 'abnormal library state',
  EW_SYSTEM: 'system error',
  EW_PARITY: 'shared RAM parity error',
  EW_MMCSYS: 'emergency or MMC system error',
  EW_RESET: 'reset or stop request during the call',
  EW_BUSY: 'busy: another request is in progress on this handle',
  EW_OK: 'no error',
  EW_FUNC: 'function not executed or not available',
  EW_LENGTH: 'data block length error',
  EW_NUMBER: 'data number error',
  EW_ATTRIB: 'data attribute error',
  EW_DATA: 'data error',
  EW_NOOPT: 'CNC option not available',
  EW_PROT: 'write protected',
  EW_OVRFLOW: 'CNC memory overflow',
  EW_PARAM: 'CNC parameter error',
  EW_BUFFER: 'buffer empty or full',
  EW_PATH: 'path number error',
  EW_MODE: 'CNC mode error',
  EW_REJECT: 'execution rejected by the CNC',
  EW_DTSRVR: 'data server error',
  EW_ALARM: 'CNC alarm',
  EW_STOP: 'CNC stopped',
  EW_PASSWD: 'data protected by password',
};

const BY_CODE = new Map<number, ReturnCodeName>(Object.entries(EW).map(([name, code]) => [code, name as ReturnCodeName]));

/** `EW_NOOPT (6, CNC option not available)`, or `rc 42 (unknown)` for a code outside the table. */
export function describeReturnCode(rc: number): string {
  const name = BY_CODE.get(rc);
  return name ? `${name} (${rc}, ${MEANING[name]})` : `rc ${rc} (unknown FOCAS return code)`;
}

/** Codes that say the session to the CNC is gone: reconnect (new handle) rather than retry. */
const LINK_LOST: ReadonlySet<number> = new Set([EW.EW_SOCKET, EW.EW_HANDLE, EW.EW_PROTOCOL, EW.EW_NODLL, EW.EW_BUS, EW.EW_HSSB]);
/** Codes that say this CNC lacks the function: the family is unsupported on it. */
const NOT_AVAILABLE: ReadonlySet<number> = new Set([EW.EW_NOOPT, EW.EW_FUNC]);

const TRANSFER_FOLLOW_UPS: ReadonlySet<string> = new Set(['cnc_upload4', 'cnc_upend4', 'cnc_download4', 'cnc_dwnend4']);

/** What one failed bridge call was doing, for the error text. */
export interface FailedCall {
  fn: string;
  rc: number;
  cnc: string;
  /** The family being read, so EW_NOOPT can name it. */
  family: ItemFamily;
}

/** The GatewayError for a FOCAS call that returned `rc` ≠ EW_OK. */
export function errorForReturnCode(call: FailedCall): GatewayError {
  const what = `focas: ${call.fn} on CNC '${call.cnc}' returned ${describeReturnCode(call.rc)}`;
  // EW_FUNC from a transfer's follow-up call means "not started", not a missing function.
  if (NOT_AVAILABLE.has(call.rc) && !(call.rc === EW.EW_FUNC && TRANSFER_FOLLOW_UPS.has(call.fn))) {
    return new GatewayError('DRIVER_FAMILY_UNSUPPORTED', `driver 'focas' does not support item family '${call.family}' on this CNC: ${call.fn} returned ${describeReturnCode(call.rc)}`);
  }
  let name: ErrorName = 'DRIVER_REQUEST_FAILED';
  if (LINK_LOST.has(call.rc)) name = 'MACHINE_NOT_CONNECTED';
  else if (call.family === 'programFiles' && (call.rc === EW.EW_DATA || call.rc === EW.EW_NUMBER) && call.fn === 'cnc_upstart4') name = 'PROGRAM_NOT_FOUND';
  return new GatewayError(name, what);
}
