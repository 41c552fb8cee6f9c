/**
 * How a program's bytes cross the bridge. JSON has no bytes, so from
 * focas-bridge 1.1 on a program's data (`cnc_upload4`, `cnc_download4`) and
 * a directory comment (`cnc_rdprogdir3`) carry the CNC's bytes one character
 * per byte, U+0000–U+00FF (docs/drivers/focas-bridge-protocol.md, "Program
 * data"). A 1.0 bridge said nothing about bytes above 0x7F, so the driver
 * sends it ASCII only and says so before a transfer starts.
 */
import type { ProgramByteLimits } from '../../core/driver-seam/driver.js';
import { GatewayError } from '../../core/interfaces/errors.js';
import { programText } from '../../core/values/program-bytes.js';
import type { BridgeInfo } from './protocol.js';

/** The first protocol version whose program data is bytes. */
export const BYTES_SINCE = '1.1';

/** Whether a bridge of this version carries program data byte for byte. */
export function carriesBytes(version: string): boolean {
  const [major, minor] = version.split('.').map(Number);
  return (major ?? 0) > 1 || ((major ?? 0) === 1 && (minor ?? 0) >= 1);
}

/** What a bridge cannot carry: nothing from 1.1 on; bytes above 0x7F for a 1.0 bridge. */
export function byteLimits(info: Pick<BridgeInfo, 'version'>, address: string): ProgramByteLimits | null {
  if (carriesBytes(info.version)) return null;
  return {
    refused: [{ from: 0x80, to: 0xff }],
    reason: `the FOCAS bridge at ${address} speaks focas-bridge ${info.version}, which carries program text as ASCII only (bytes 0x00–0x7F); a bridge of version ${BYTES_SINCE} or later carries every byte: upgrade the bridge, or keep the program to ASCII`,
  };
}

/** Program bytes as a bridge call's data text: one character per byte. */
export const toBridgeText = (bytes: Buffer): string => bytes.toString('latin1');

/** A character above U+00FF (a surrogate half included), which no byte reads as. */
export const BEYOND_A_BYTE = /[\u0100-\uffff]/;

/**
 * A bridge's data text as the program's bytes. From 1.1 each character is a
 * byte, and one above U+00FF breaks the protocol; a 1.0 bridge's text is read
 * as UTF-8, as it always was.
 */
export function fromBridgeText(text: string, info: Pick<BridgeInfo, 'version'>, address: string): Buffer {
  if (!carriesBytes(info.version)) return Buffer.from(text, 'utf8');
  const beyond = BEYOND_A_BYTE.exec(text);
  if (beyond) {
    const code = (beyond[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
    throw new GatewayError('DRIVER_REQUEST_FAILED', `focas: the bridge at ${address} sent U+${code} in program data; focas-bridge ${info.version} carries one byte per character (U+0000–U+00FF)`);
  }
  return Buffer.from(text, 'latin1');
}

/** A directory comment as text for a reader (programText's rule: UTF-8, else Windows-1252). */
export function commentText(comment: string, info: Pick<BridgeInfo, 'version'>): string {
  if (!carriesBytes(info.version) || BEYOND_A_BYTE.test(comment)) return comment;
  return programText(Buffer.from(comment, 'latin1')).text;
}
