/**
 * What a simulated machine is made of: its axes, tool magazine, part programs
 * (plausible ISO G-code). Everything here is drawn once per machine from a
 * seeded `Prng`. The vendors' status texts and alarm catalogues are in
 * catalog-vendors.ts.
 */

export const MACHINE_TYPES = ['lathe', 'mill', 'machiningCenter', 'turnMill', 'grinder'] as const;
export type MachineType = (typeof MACHINE_TYPES)[number];

/** mulberry32: tiny, fast and good enough for a simulation; never Math.random, so runs replay. */
export class Prng {
  private state: number;
  constructor(seed: number) {
    this.state = seed | 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = Math.imul(this.state ^ (this.state >>> 15), this.state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  range(min: number, max: number): number {
    return min + (max - min) * this.next();
  }
  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor((max - min + 1) * this.next());
  }
  /** Uniform on a log scale, so short durations are as likely as long ones per decade. */
  logRange(min: number, max: number): number {
    return min * Math.pow(max / min, this.next());
  }
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(items.length * this.next())];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }
}

export interface AxisSpec {
  name: string;
  unit: 'mm' | 'deg';
  /** Where the axis rests between cycles (absolute). */
  home: number;
  /** Machine coordinate = absolute + workOffset. */
  workOffset: number;
  /** Amplitude of the motion during a cycle. */
  reach: number;
  /** Angular frequency of the motion, radians per cycle second. */
  speed: number;
}

const AXES: Record<MachineType, readonly string[]> = {
  lathe: ['X', 'Z'],
  grinder: ['X', 'Z'],
  turnMill: ['X', 'Z', 'C'],
  mill: ['X', 'Y', 'Z'],
  machiningCenter: ['X', 'Y', 'Z', 'B'],
};

export function makeAxes(type: MachineType, rng: Prng): AxisSpec[] {
  return AXES[type].map((name) => {
    const rotary = name === 'A' || name === 'B' || name === 'C';
    return {
      name,
      unit: rotary ? 'deg' : 'mm',
      home: rotary ? 0 : name === 'Z' ? rng.range(80, 200) : rng.range(-20, 150),
      workOffset: rotary ? 0 : -rng.range(100, 600),
      reach: rotary ? 180 : rng.range(20, 120),
      speed: rng.range(0.05, 0.4),
    };
  });
}

export interface ToolSpec {
  toolNum: number;
  groupNum: number;
  offsetNum: number;
  description: string;
  spindleRpm: number;
  /** Cutting feed, mm/min. */
  feed: number;
  /** Count-based life limit, parts. */
  lifeLimit: number;
}

const TURNING_TOOLS = ['OD ROUGH CNMG120408', 'OD FINISH VNMG160404', 'GROOVE 3MM', 'THREAD 60DEG', 'DRILL D12', 'BORING BAR D16', 'PARTING 3MM'];
const LIVE_TOOLS = ['LIVE DRILL D6', 'LIVE END MILL D8'];
const MILLING_TOOLS = ['FACE MILL D63', 'END MILL D12', 'END MILL D6', 'SPOT DRILL D10', 'DRILL D8.5', 'TAP M10', 'CHAMFER D10', 'BALL NOSE R3'];
const GRINDING_TOOLS = ['WHEEL A60 ROUGH', 'WHEEL A120 FINISH', 'WHEEL CBN FACE'];

export function makeTools(type: MachineType, rng: Prng): ToolSpec[] {
  const names =
    type === 'lathe' ? TURNING_TOOLS : type === 'turnMill' ? [...TURNING_TOOLS, ...LIVE_TOOLS] : type === 'grinder' ? GRINDING_TOOLS : MILLING_TOOLS;
  return names.map((description, i) => ({
    toolNum: i + 1,
    // Tool-life groups bundle a tool with its sister tools; here a group per pair of stations.
    groupNum: Math.floor(i / 2) + 1,
    offsetNum: i + 1,
    description,
    spindleRpm: Math.round((type === 'grinder' ? rng.range(1500, 3000) : rng.range(800, 6000)) / 10) * 10,
    feed: Math.round(rng.range(60, 900)),
    lifeLimit: rng.pick([150, 200, 300, 500, 800, 1000, 1500, 2000]),
  }));
}

export interface ProgramSpec {
  name: string;
  comment: string;
  content: string;
  /** Indexes into the machine's tools, in the order the program uses them. */
  tools: number[];
  /** First line (1-based) of each tool's section, parallel to `tools`. */
  sectionStart: number[];
  sectionLines: number[];
  cycleTimeSec: number;
  /** Share of running time spent cutting rather than rapids and tool changes. */
  cutFraction: number;
}

const PART_NAMES: Record<MachineType, readonly string[]> = {
  lathe: ['SHAFT D40', 'FLANGE D120', 'BUSHING D30', 'PIN D16', 'SLEEVE D55', 'SPACER D70'],
  turnMill: ['HUB D90 4X M8', 'SHAFT D40 FLATS', 'VALVE BODY D60', 'COUPLING D50'],
  grinder: ['SPINDLE JOURNAL D45', 'BEARING SEAT D35', 'PIN D16 H6', 'PLUNGER D22'],
  mill: ['BRACKET AL6061', 'COVER PLATE', 'MANIFOLD BLOCK', 'MOUNTING PLATE', 'CLAMP JAW'],
  machiningCenter: ['HOUSING GG25', 'PUMP BODY', 'GEARBOX COVER', 'VALVE BLOCK', 'FIXTURE BASE'],
};

const num = (value: number): string => (Number.isInteger(value) ? `${value}.` : value.toFixed(3).replace(/0+$/, ''));

function turningSection(tool: ToolSpec, rng: Prng, lines: string[]): void {
  const t = String(tool.toolNum).padStart(2, '0');
  const diameter = Math.round(rng.range(20, 110));
  const length = Math.round(rng.range(20, 90));
  const feed = (tool.feed / 2000).toFixed(2);
  lines.push(`(${tool.description})`, `T${t}${t}`, `G97 S${tool.spindleRpm} M03`);
  if (/DRILL/.test(tool.description)) {
    lines.push('G00 X0. Z2. M08', `G74 R1.`, `G74 Z-${num(length)} Q5000 F${feed}`);
  } else if (/THREAD/.test(tool.description)) {
    const pitch = rng.pick([1, 1.5, 2]);
    lines.push(`G00 X${num(diameter + 2)} Z5. M08`, 'G76 P011060 Q50 R0.05', `G76 X${num(diameter - 1.23 * pitch)} Z-${num(length / 2)} P${Math.round(615 * pitch)} Q300 F${num(pitch)}`);
  } else if (/GROOVE|PARTING/.test(tool.description)) {
    const target = /PARTING/.test(tool.description) ? 0 : diameter - rng.int(2, 6);
    lines.push(`G00 X${num(diameter + 2)} Z-${num(length)} M08`, `G01 X${num(target)} F${feed}`, `G00 X${num(diameter + 2)}`);
  } else {
    lines.push(`G00 X${num(diameter + 2)} Z2. M08`);
    for (let pass = rng.int(2, 6), x = diameter; pass > 0; pass--) {
      x -= rng.pick([0.5, 1, 1.5, 2]);
      lines.push(`G01 X${num(x)} F${feed}`, `Z-${num(length)}`, `G00 X${num(x + 2)}`, 'Z2.');
    }
  }
  lines.push('G28 U0. W0. M09');
}

function millingSection(tool: ToolSpec, rng: Prng, lines: string[]): void {
  const t = tool.toolNum;
  lines.push(`T${t} M06 (${tool.description})`, `G90 G54 G00 X${num(Math.round(rng.range(-50, 0)))} Y0.`, `S${tool.spindleRpm} M03`, `G43 H${t} Z50. M08`);
  if (/DRILL|TAP/.test(tool.description)) {
    const depth = Math.round(rng.range(8, 30));
    lines.push(`G98 G81 X20. Y20. Z-${num(depth)} R3. F${tool.feed}`);
    for (let hole = rng.int(2, 6); hole > 0; hole--) lines.push(`X${num(Math.round(rng.range(10, 150)))} Y${num(Math.round(rng.range(10, 90)))}`);
    lines.push('G80');
  } else {
    lines.push(`G01 Z-${num(rng.pick([0.5, 1, 2, 3]))} F${Math.round(tool.feed / 3)}`);
    for (let move = rng.int(3, 8); move > 0; move--) lines.push(`G01 X${num(Math.round(rng.range(0, 160)))} Y${num(Math.round(rng.range(0, 100)))} F${tool.feed}`);
  }
  lines.push('G00 Z50. M09', 'G91 G28 Z0.');
}

/** A handful of O-number programs for the machine type, each using a few of its tools. */
export function makePrograms(type: MachineType, tools: readonly ToolSpec[], baseCycleSec: number, rng: Prng): ProgramSpec[] {
  const turning = type === 'lathe' || type === 'turnMill' || type === 'grinder';
  const count = rng.int(4, 6);
  const programs: ProgramSpec[] = [];
  for (let p = 0, number = 1001; p < count; p++, number += rng.int(1, 20)) {
    const name = `O${number}`;
    const comment = rng.pick(PART_NAMES[type]);
    const used = tools.map((_, i) => i).filter(() => rng.next() < 0.6);
    if (used.length === 0) used.push(0);
    const lines = ['%', `${name} (${comment})`, turning ? 'G21 G40 G99' : 'G21 G17 G40 G49 G80 G90'];
    const sectionStart: number[] = [];
    const sectionLines: number[] = [];
    for (const index of used) {
      const tool = tools[index];
      if (tool === undefined) continue;
      sectionStart.push(lines.length + 1);
      if (turning) turningSection(tool, rng, lines);
      else millingSection(tool, rng, lines);
      sectionLines.push(lines.length + 1 - (sectionStart[sectionStart.length - 1] ?? 0));
    }
    lines.push('M30', '%');
    programs.push({
      name,
      comment,
      content: lines.join('\n') + '\n',
      tools: used,
      sectionStart,
      sectionLines,
      cycleTimeSec: baseCycleSec * rng.range(0.6, 1.6),
      cutFraction: rng.range(0.55, 0.85),
    });
  }
  return programs;
}
