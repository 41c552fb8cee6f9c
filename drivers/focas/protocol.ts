/**
 * The FOCAS bridge protocol, version 1 (docs/drivers/focas-bridge-protocol.md):
 * JSON over HTTP/1.1. `GET /focas/info` is the handshake; every other call is
 * `POST /focas/cnc/<cnc>/<function>` with a JSON body, answered `200` with
 * `{ rc, …outputs }` where `rc` is the FOCAS return code and the outputs carry
 * FOCAS structure field names. Both the driver and the simulator parse with
 * these schemas, so they cannot drift apart.
 */
import { z } from 'zod';

export const PROTOCOL_NAME = 'focas-bridge';
/**
 * major.minor: a minor bump adds optional fields or calls, or settles what an
 * earlier minor left open (1.1: program data is bytes, one per character); a
 * major bump breaks clients.
 */
export const PROTOCOL_VERSION = '1.1';
export const PROTOCOL_MAJOR = 1;
export const INFO_PATH = '/focas/info';
/** Path of one call on one CNC; the CNC name is URI-encoded. */
export const callPath = (cnc: string, fn: BridgeFunction): string => `/focas/cnc/${encodeURIComponent(cnc)}/${fn}`;

const int = z.number().int();
const short = int.min(-32768).max(32767);

export const infoSchema = z.object({
  protocol: z.string(),
  version: z.string().regex(/^\d+\.\d+$/),
  /** Free text naming the bridge product and its version. */
  bridge: z.string().optional(),
  cncs: z.array(z.object({ name: z.string().min(1), series: z.string().optional() })),
});
export type BridgeInfo = z.infer<typeof infoSchema>;

/** An HTTP error body (unknown CNC, malformed request); FOCAS failures use `rc` instead. */
export const httpErrorSchema = z.object({ error: z.string() });

const handle = { handle: int.min(1) };

/** Request bodies, one per bridge call. */
export const requestSchemas = {
  cnc_allclibhndl3: z.object({ timeout: int.min(0).max(3600) }),
  cnc_freelibhndl: z.object(handle),
  cnc_statinfo: z.object(handle),
  cnc_rdalmmsg: z.object({ ...handle, type: short.min(-1), num: int.min(1).max(100) }),
  cnc_rdopmsg: z.object({ ...handle, type: short.min(-1) }),
  cnc_exeprgname: z.object(handle),
  cnc_rdspeed: z.object({ ...handle, type: short.min(-1).max(1) }),
  cnc_actf: z.object(handle),
  cnc_acts: z.object(handle),
  pmc_rdpmcrng: z.object({ ...handle, adr_type: short.min(0), data_type: short.min(0).max(2), s_number: int.min(0), e_number: int.min(0) }),
  cnc_rdposition: z.object({ ...handle, type: short.min(-1).max(3) }),
  cnc_rdsvmeter: z.object(handle),
  cnc_rdspmeter: z.object({ ...handle, type: short.min(-1).max(1) }),
  cnc_rdparam: z.object({ ...handle, datano: int.min(0), axis: short.min(-1) }),
  cnc_rdtlinfo: z.object(handle),
  cnc_rdtlgrp: z.object({ ...handle, grp_num: int.min(1) }),
  cnc_rdtltool: z.object({ ...handle, grp_num: int.min(1), tool_num: int.min(1) }),
  cnc_rdprogdir3: z.object({ ...handle, type: short.min(0).max(2), top_prog: int.min(0), num_prg: int.min(1).max(1000) }),
  cnc_upstart4: z.object({ ...handle, type: short.min(0), prgname: z.string().min(1).max(1024) }),
  cnc_upload4: z.object({ ...handle, length: int.min(1).max(65_536) }),
  cnc_upend4: z.object(handle),
  cnc_dwnstart4: z.object({ ...handle, type: short.min(0), prgname: z.string().min(1).max(1024) }),
  // From 1.1, program data is bytes, one character each (program-data.ts).
  cnc_download4: z.object({ ...handle, data: z.string().max(65_536).refine((d) => !/[\u0100-\uffff]/.test(d), 'program data carries one byte per character, U+0000–U+00FF') }),
  cnc_dwnend4: z.object(handle),
} as const;
export type BridgeFunction = keyof typeof requestSchemas;
export type BridgeRequest<F extends BridgeFunction> = z.infer<(typeof requestSchemas)[F]>;
export const BRIDGE_FUNCTIONS = Object.keys(requestSchemas) as BridgeFunction[];

/** ODBST: the CNC status of `cnc_statinfo`. */
export const odbstSchema = z.object({
  hdck: short, tmmode: short, aut: short, run: short, motion: short, mstb: short, emergency: short, alarm: short, edit: short,
});
export type Odbst = z.infer<typeof odbstSchema>;

/** SPEEDELM / POSELM / LOADELM: a scaled integer, value = data / 10^dec. */
const scaledSchema = z.object({ data: int, dec: short.min(0).max(9), unit: short, name: z.string(), suff: z.string() });
export type ScaledValue = z.infer<typeof scaledSchema>;
const dateSchema = z.object({ year: short, month: short, day: short, hour: short, minute: short });
export type FocasDate = z.infer<typeof dateSchema>;

/** Successful response bodies (rc = EW_OK), one per bridge call. */
export const responseSchemas = {
  cnc_allclibhndl3: z.object({ handle: int.min(1) }),
  cnc_freelibhndl: z.object({}),
  cnc_statinfo: z.object({ statinfo: odbstSchema }),
  cnc_rdalmmsg: z.object({
    num: int.min(0),
    almmsg: z.array(z.object({ alm_no: int, type: short, axis: short, msg_len: short, alm_msg: z.string() })),
  }),
  cnc_rdopmsg: z.object({ opmsg: z.array(z.object({ datano: int, type: short, char_num: short, data: z.string() })) }),
  cnc_exeprgname: z.object({ exeprg: z.object({ name: z.string(), o_num: int }) }),
  cnc_rdspeed: z.object({ speed: z.object({ actf: scaledSchema.extend({ disp: short }), acts: scaledSchema.extend({ disp: short }) }) }),
  cnc_actf: z.object({ act: z.object({ data: int }) }),
  cnc_acts: z.object({ act: z.object({ data: int }) }),
  pmc_rdpmcrng: z.object({ pmc: z.object({ type_a: short, type_d: short, datano_s: int, datano_e: int, cdata: z.array(int.min(0).max(255)) }) }),
  cnc_rdposition: z.object({
    data_num: int.min(0),
    pos: z.array(z.object({ abs: scaledSchema, mach: scaledSchema, rel: scaledSchema, dist: scaledSchema })),
  }),
  cnc_rdsvmeter: z.object({ data_num: int.min(0), svload: z.array(scaledSchema) }),
  cnc_rdspmeter: z.object({ data_num: int.min(0), spload: z.array(scaledSchema) }),
  cnc_rdparam: z.object({ param: z.object({ datano: int, type: short, ldata: int }) }),
  cnc_rdtlinfo: z.object({ tlinfo: z.object({ max_group: int.min(0), max_tool: int.min(0), max_minute: int.min(0), max_cycle: int.min(0) }) }),
  cnc_rdtlgrp: z.object({
    tlgrp: z.object({
      ntool: int.min(0), nfree: int.min(0), life: int.min(0), count: int.min(0), use_tool: int.min(0),
      opt_grpno: int, life_rest: int, rest_sig: short, count_type: short.min(0).max(1),
    }),
  }),
  cnc_rdtltool: z.object({ tltool: z.object({ tool_num: int.min(0), h_code: int.min(0), d_code: int.min(0), tool_inf: int }) }),
  cnc_rdprogdir3: z.object({
    num_prg: int.min(0),
    prgdir: z.array(z.object({ number: int.min(0), length: int.min(0), page: int.min(0), comment: z.string(), mdate: dateSchema, cdate: dateSchema })),
  }),
  cnc_upstart4: z.object({}),
  cnc_upload4: z.object({ length: int.min(0), data: z.string() }),
  cnc_upend4: z.object({}),
  cnc_dwnstart4: z.object({}),
  cnc_download4: z.object({ length: int.min(0) }),
  cnc_dwnend4: z.object({}),
} as const satisfies Record<BridgeFunction, z.ZodType>;
export type BridgeResponse<F extends BridgeFunction> = z.infer<(typeof responseSchemas)[F]>;

/** Every response carries the FOCAS return code; `detail` is optional bridge text for a human. */
export const returnCodeSchema = z.object({ rc: short, detail: z.string().optional() });

/** cnc_rdspeed / SPEEDELM units. */
export const SPEED_UNIT = { MM_PER_MIN: 0, INCH_PER_MIN: 1, RPM: 2, MM_PER_REV: 3, INCH_PER_REV: 4 } as const;
/** POSELM units. */
export const POSITION_UNIT = { MM: 0, INCH: 1, DEGREE: 2 } as const;
/** pmc_rdpmcrng address types used here (FOCAS adr_type). */
export const PMC_ADDRESS = { G: 0, F: 1 } as const;

/**
 * The FANUC parameters behind `timeData` and `count`. The times come in two
 * parameters each: whole minutes, plus the milliseconds of the current minute.
 */
export const PARAM = {
  PARTS_COUNT: 6711,
  PARTS_TOTAL: 6712,
  PARTS_REQUIRED: 6713,
  POWER_ON_MIN: 6750,
  OPERATING_MS: 6751,
  OPERATING_MIN: 6752,
  CUTTING_MS: 6753,
  CUTTING_MIN: 6754,
  CYCLE_MS: 6757,
  CYCLE_MIN: 6758,
} as const;

/**
 * Standard FANUC override signals (PMC → CNC G addresses, path 1):
 * G0012 *FV0–*FV7 feed override (inverted binary, 0–254 %), G0014 ROV1/ROV2
 * rapid override (00 100 %, 01 50 %, 10 25 %, 11 F0), G0030 SOV0–SOV7 spindle
 * override (binary, 0–254 %). FOCAS has no call for overrides; they are read
 * from the PMC.
 */
export const OVERRIDE_SIGNALS = { FEED: 12, RAPID: 14, SPINDLE: 30 } as const;
