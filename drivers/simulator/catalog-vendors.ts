/**
 * The controller vendors a simulated machine can speak as: their words for
 * each execution situation, program directory, alarm and warning catalogue
 * and emergency stop, picked by the machine's `system` text.
 */
import type { ExecutionState } from '../../core/driver-seam/driver.js';

/** Execution situations a vendor has its own words for. */
export type ExecKind = 'reset' | 'stopped' | 'hold' | 'running' | 'manual' | 'emergency';

/** The state each situation normalises to; manual jogging runs no program, so it counts as stopped. */
export const EXEC_STATE: Record<ExecKind, ExecutionState> = {
  reset: 'RESET',
  stopped: 'STOPPED',
  hold: 'HOLD',
  running: 'RUNNING',
  manual: 'STOPPED',
  emergency: 'EMERGENCY',
};

export interface AlarmSpec {
  code: string;
  message: string;
}

export interface VendorSpec {
  texts: Record<ExecKind, string>;
  programDir: string;
  alarms: readonly AlarmSpec[];
  warnings: readonly AlarmSpec[];
  emergency: AlarmSpec;
}

const a = (code: string, message: string): AlarmSpec => ({ code, message });

const VENDORS = {
  FANUC: {
    texts: { reset: '****', stopped: 'STOP', hold: 'HOLD', running: 'STRT', manual: 'MSTR', emergency: '-EMG-' },
    programDir: '//CNC_MEM/USER/PATH1/',
    alarms: [
      a('SV0401', 'SERVO V-READY OFF'), a('OT0500', '+ OVERTRAVEL ( SOFT 1 )'), a('OT0501', '- OVERTRAVEL ( SOFT 1 )'),
      a('SV0411', 'EXCESS ERROR (MOVING)'), a('SP1220', 'NO SPINDLE AMP.'), a('PS0010', 'IMPROPER G-CODE'),
      a('EX1001', 'COOLANT LEVEL LOW'), a('EX1015', 'SPINDLE LUBRICATION PRESSURE LOW'), a('EX1020', 'DOOR INTERLOCK OPEN'),
    ],
    warnings: [a('EX2001', 'WAY LUBE OIL LOW'), a('EX2005', 'CHIP CONVEYOR OVERLOAD'), a('EX2020', 'AIR PRESSURE LOW')],
    emergency: a('EX1000', 'EMERGENCY STOP'),
  },
  SIEMENS: {
    texts: { reset: 'RESET', stopped: 'STOPPED', hold: 'INTERRUPTED', running: 'ACTIVE', manual: 'RESET', emergency: 'EMERGENCY STOP' },
    programDir: '/_N_MPF_DIR/',
    alarms: [
      a('25000', 'Axis X1 hardware fault of active encoder'), a('10620', 'Channel 1 block N120 axis Z1 reaches software limit switch +'),
      a('25050', 'Axis Y1 contour monitoring'), a('12080', 'Channel 1 block N40 syntax error in text G01'),
      a('700016', 'Coolant level low'), a('700021', 'Door interlock open'),
    ],
    warnings: [a('700101', 'Way lubrication oil low'), a('700105', 'Chip conveyor overload'), a('700110', 'Air pressure low')],
    emergency: a('3000', 'Emergency stop'),
  },
  HEIDENHAIN: {
    texts: { reset: 'IDLE', stopped: 'STOPPED', hold: 'INTERRUPTED', running: 'STARTED', manual: 'IDLE', emergency: 'EMERGENCY STOP' },
    programDir: 'TNC:/nc_prog/',
    alarms: [a('8B40', 'Following error X'), a('8040', 'Limit switch X+'), a('PLC0052', 'Coolant level low'), a('PLC0060', 'Hydraulic pressure low')],
    warnings: [a('PLC0101', 'Lubrication oil low'), a('PLC0105', 'Chip conveyor overload')],
    emergency: a('1010', 'Emergency stop'),
  },
  MAZAK: {
    texts: { reset: 'READY', stopped: 'PROGRAM_STOPPED', hold: 'FEED_HOLD', running: 'ACTIVE', manual: 'READY', emergency: 'EMERGENCY' },
    programDir: 'C:/MC_PROGRAM/',
    alarms: [a('22', 'SERVO OVERLOAD'), a('29', 'SOFT LIMIT OVER'), a('214', 'SPINDLE OVERHEAT'), a('409', 'COOLANT LEVEL LOW')],
    warnings: [a('1202', 'LUBRICATION OIL LOW'), a('1210', 'CHIP CONVEYOR OVERLOAD')],
    emergency: a('200', 'EMERGENCY STOP'),
  },
  OKUMA: {
    texts: { reset: 'RESET', stopped: 'STOP', hold: 'SLIDE HOLD', running: 'RUN', manual: 'MANUAL', emergency: 'EMG' },
    programDir: 'MD1:/',
    alarms: [a('1204', 'Alarm-A Servo amp fault'), a('2204', 'Alarm-B Soft-limit X'), a('2350', 'Alarm-B Coolant level low'), a('2460', 'Alarm-B Door interlock')],
    warnings: [a('3201', 'Alarm-C Lubrication oil low'), a('3210', 'Alarm-C Chip conveyor overload')],
    emergency: a('1000', 'Alarm-A Emergency stop'),
  },
  GENERIC: {
    texts: { reset: 'RESET', stopped: 'STOPPED', hold: 'HOLD', running: 'RUNNING', manual: 'MANUAL', emergency: 'EMERGENCY' },
    programDir: '/programs/',
    alarms: [a('A100', 'Servo fault'), a('A200', 'Soft limit exceeded'), a('A300', 'Coolant level low')],
    warnings: [a('W100', 'Lubrication oil low'), a('W200', 'Air pressure low')],
    emergency: a('E000', 'Emergency stop'),
  },
} satisfies Record<string, VendorSpec>;

const VENDOR_PATTERNS: ReadonlyArray<[RegExp, keyof typeof VENDORS]> = [
  [/FANUC/, 'FANUC'],
  [/SIEMENS|SINUMERIK/, 'SIEMENS'],
  [/HEIDENHAIN|TNC/, 'HEIDENHAIN'],
  [/MAZAK|MAZATROL/, 'MAZAK'],
  [/OKUMA|OSP/, 'OKUMA'],
];

/** The vendor whose texts a `system` string (e.g. `FANUC 0i-TF`, `SINUMERIK 840D`) calls for. */
export function vendorFor(system: string): VendorSpec {
  const upper = system.toUpperCase();
  const match = VENDOR_PATTERNS.find(([pattern]) => pattern.test(upper));
  return VENDORS[match ? match[1] : 'GENERIC'];
}
