/**
 * The simulator's program directory: a FileDirectoryType object under each
 * machine whose files are FileType objects (OPC 10000-5 Annex C), as CNC
 * servers such as SINUMERIK's put part programs behind the standard file
 * transfer. The bytes live in the machine model's program store, so they are
 * kept exactly, listed by the other readers, and run when the model runs
 * what it was last given. A written file reaches the store at Close, whole,
 * as a controller takes a program once its transfer ended.
 */
import type { CallMethodResultOptions, ISessionContext, UAMethod, UAObject, UAVariable, Variant } from 'node-opcua';
import type { SimulatedMachine } from '../simulator/model.js';
import type { OpcuaModule } from './connection.js';
import type { SpaceNamespaces } from './simulator-space.js';

/** Longest file the simulator keeps: a Write past it is refused (BadResourceUnavailable). */
const MAX_FILE_BYTES = 16 * 1024 * 1024;
/** OPC 10000-5 C.2.1 open mode bits. */
const MODE = { read: 0x1, write: 0x2, eraseExisting: 0x4, append: 0x8 } as const;

/** Transfer counters of one machine's directory, for tests and diagnostics. */
export interface TransferStats {
  reads: number;
  writes: number;
  /** Largest Data of one Write, and largest answer of one Read, in bytes. */
  largestWrite: number;
  largestRead: number;
  opened: number;
  closed: number;
}

interface OpenFile {
  name: string;
  mode: number;
  session: string;
  /** The file's bytes as this handle sees them: a copy, committed to the store at Close when written. */
  data: Buffer;
  position: number;
  written: boolean;
}

type Result = CallMethodResultOptions;

/** Binds a method; node-opcua tells promise-returning functions by their two parameters. */
function bind(method: UAMethod, run: (args: Variant[], context: ISessionContext) => Result): void {
  method.bindMethod(async (args: Variant[], context: ISessionContext) => run(args, context));
}

/** One machine's program directory and its open handles. */
class ProgramDirectory {
  readonly stats: TransferStats = { reads: 0, writes: 0, largestWrite: 0, largestRead: 0, opened: 0, closed: 0 };
  private readonly handles = new Map<number, OpenFile>();
  private readonly files = new Map<string, UAObject>();
  private nextHandle = 1;

  constructor(
    private readonly opcua: OpcuaModule,
    private readonly ns: SpaceNamespaces,
    private readonly machineID: string,
    private readonly model: SimulatedMachine,
    readonly node: UAObject,
  ) {}

  private get dir(): string {
    return this.model.programDir;
  }

  private status(name: keyof OpcuaModule['StatusCodes']): Result {
    return { statusCode: this.opcua.StatusCodes[name] as Result['statusCode'] };
  }

  private ok(...outputArguments: Array<{ dataType: number; value: unknown }>): Result {
    return { statusCode: this.opcua.StatusCodes.Good, outputArguments };
  }

  /** A UInt64 scalar (node-opcua takes it as [high, low] and cannot guess the array type). */
  private uint64(n: number): { dataType: number; arrayType: number; value: [number, number] } {
    return { dataType: this.opcua.DataType.UInt64, arrayType: this.opcua.VariantArrayType.Scalar, value: [Math.floor(n / 2 ** 32), n >>> 0] };
  }

  /** The session a call came in on: handles belong to the session that opened them. */
  private sessionOf(context: ISessionContext): string {
    return context.session?.getSessionId().toString() ?? '';
  }

  /** Adds the FileType object of a stored file. */
  addFile(name: string): UAObject {
    const existing = this.files.get(name);
    if (existing) return existing;
    const { DataType } = this.opcua;
    const fileType = this.node.addressSpace.findObjectType('FileType');
    if (!fileType) throw new Error('OPC UA simulator: no FileType in the address space');
    const file = fileType.instantiate({
      namespace: this.ns.sim,
      nodeId: `ns=${this.ns.sim.index};s=${this.machineID}.Programs.${name}`,
      browseName: { name, namespaceIndex: this.ns.sim.index },
      componentOf: this.node,
    }) as UAObject;
    const prop = (browseName: string) => file.getPropertyByName(browseName) as UAVariable;
    prop('Size').bindVariable({
      get: () => {
        const size = this.model.download(this.dir, name)?.length ?? 0;
        return new this.opcua.Variant(this.uint64(size));
      },
    }, true);
    prop('Writable').setValueFromSource({ dataType: DataType.Boolean, value: true });
    prop('UserWritable').setValueFromSource({ dataType: DataType.Boolean, value: true });
    prop('OpenCount').bindVariable({
      get: () => new this.opcua.Variant({ dataType: DataType.UInt16, value: [...this.handles.values()].filter((h) => h.name === name).length }),
    }, true);
    const method = (browseName: string) => file.getMethodByName(browseName) as UAMethod;
    bind(method('Open'), (args, context) => this.open(name, Number(args[0]?.value), context));
    bind(method('Close'), (args, context) => this.close(Number(args[0]?.value), context));
    bind(method('Read'), (args, context) => this.read(Number(args[0]?.value), Number(args[1]?.value), context));
    bind(method('Write'), (args, context) => this.write(Number(args[0]?.value), args[1], context));
    bind(method('GetPosition'), (args, context) => this.getPosition(Number(args[0]?.value), context));
    bind(method('SetPosition'), (args, context) => this.setPosition(Number(args[0]?.value), args[1], context));
    this.files.set(name, file);
    return file;
  }

  private open(name: string, mode: number, context: ISessionContext): Result {
    if (!Number.isInteger(mode) || mode <= 0 || mode > 0xf) return this.status('BadInvalidArgument');
    const writing = (mode & (MODE.write | MODE.eraseExisting | MODE.append)) !== 0;
    if ((mode & MODE.eraseExisting) && !(mode & MODE.write)) return this.status('BadInvalidArgument');
    const others = [...this.handles.values()].filter((h) => h.name === name);
    // One writer and no reader beside it, as the spec allows a server to insist on.
    if (others.length > 0 && (writing || others.some((h) => (h.mode & MODE.write) !== 0))) return this.status('BadNotWritable');
    const stored = this.model.download(this.dir, name) ?? Buffer.alloc(0);
    const data = mode & MODE.eraseExisting ? Buffer.alloc(0) : Buffer.from(stored);
    const handle = this.nextHandle++;
    this.handles.set(handle, { name, mode, session: this.sessionOf(context), data, position: mode & MODE.append ? data.length : 0, written: (mode & MODE.eraseExisting) !== 0 });
    this.stats.opened += 1;
    return this.ok({ dataType: this.opcua.DataType.UInt32, value: handle });
  }

  private handle(handle: number, context: ISessionContext): OpenFile | undefined {
    const open = this.handles.get(handle);
    return open && open.session === this.sessionOf(context) ? open : undefined;
  }

  private close(handle: number, context: ISessionContext): Result {
    const open = this.handle(handle, context);
    if (!open) return this.status('BadInvalidArgument');
    this.handles.delete(handle);
    this.stats.closed += 1;
    if (open.written) this.model.upload(this.dir, open.name, open.data);
    return this.ok();
  }

  private read(handle: number, length: number, context: ISessionContext): Result {
    const open = this.handle(handle, context);
    if (!open || !(open.mode & MODE.read)) return this.status('BadInvalidState');
    if (!Number.isInteger(length) || length < 0) return this.status('BadInvalidArgument');
    const chunk = open.data.subarray(open.position, open.position + length);
    open.position += chunk.length;
    this.stats.reads += 1;
    this.stats.largestRead = Math.max(this.stats.largestRead, chunk.length);
    return this.ok({ dataType: this.opcua.DataType.ByteString, value: Buffer.from(chunk) });
  }

  private write(handle: number, data: Variant | undefined, context: ISessionContext): Result {
    const open = this.handle(handle, context);
    if (!open || !(open.mode & (MODE.write | MODE.append))) return this.status('BadInvalidState');
    const bytes: unknown = data?.value;
    if (bytes !== null && !Buffer.isBuffer(bytes)) return this.status('BadInvalidArgument');
    const chunk = bytes ?? Buffer.alloc(0);
    const end = open.position + chunk.length;
    if (end > MAX_FILE_BYTES) return this.status('BadResourceUnavailable');
    const grown = end > open.data.length ? Buffer.concat([open.data, Buffer.alloc(end - open.data.length)]) : open.data;
    chunk.copy(grown, open.position);
    open.data = grown;
    open.position = end;
    open.written = true;
    this.stats.writes += 1;
    this.stats.largestWrite = Math.max(this.stats.largestWrite, chunk.length);
    return this.ok();
  }

  private getPosition(handle: number, context: ISessionContext): Result {
    const open = this.handle(handle, context);
    if (!open) return this.status('BadInvalidArgument');
    return this.ok(this.uint64(open.position));
  }

  private setPosition(handle: number, position: Variant | undefined, context: ISessionContext): Result {
    const open = this.handle(handle, context);
    if (!open) return this.status('BadInvalidArgument');
    const v: unknown = position?.value;
    const at = Array.isArray(v) ? Number(v[0]) * 2 ** 32 + Number(v[1]) : Number(v);
    if (!Number.isSafeInteger(at) || at < 0) return this.status('BadInvalidArgument');
    open.position = Math.min(at, open.data.length);
    return this.ok();
  }

  /** CreateFile(FileName, RequestFileOpen) → (FileNodeId, FileHandle). */
  createFile(name: unknown, requestOpen: unknown, context: ISessionContext): Result {
    const { DataType } = this.opcua;
    if (typeof name !== 'string' || name.trim() === '' || /[/\\\p{Cc}]/u.test(name)) return this.status('BadInvalidArgument');
    if (this.files.has(name)) return this.status('BadBrowseNameDuplicated');
    this.model.upload(this.dir, name, Buffer.alloc(0));
    const file = this.addFile(name);
    let handle = 0;
    if (requestOpen === true) {
      const opened = this.open(name, MODE.read | MODE.write, context);
      handle = Number(opened.outputArguments?.[0]?.value ?? 0);
    }
    return this.ok({ dataType: DataType.NodeId, value: file.nodeId }, { dataType: DataType.UInt32, value: handle });
  }

  /**
   * Delete(ObjectToDelete): removes the file from the directory. The model's
   * store has no delete, so its copy stays where only the model sees it (a
   * program still running keeps its text), as a control keeps the program it
   * runs until the next one is selected.
   */
  deleteFile(target: unknown): Result {
    const wanted = target === null || target === undefined ? '' : String(target);
    const entry = [...this.files.entries()].find(([, node]) => node.nodeId.toString() === wanted);
    if (!entry) return this.status('BadNotFound');
    const [name, node] = entry;
    if ([...this.handles.values()].some((h) => h.name === name)) return this.status('BadInvalidState');
    this.files.delete(name);
    this.node.addressSpace.deleteNode(node);
    return this.ok();
  }
}

/** The program directory of one machine, and its counters. */
export interface ServedDirectory {
  stats: TransferStats;
}

/** Adds `Programs` (FileDirectoryType) under the machine object, one FileType object per stored program. */
export function addProgramDirectory(opcua: OpcuaModule, ns: SpaceNamespaces, root: UAObject, machineID: string, model: SimulatedMachine): ServedDirectory {
  const type = root.addressSpace.findObjectType('FileDirectoryType');
  if (!type) throw new Error('OPC UA simulator: no FileDirectoryType in the address space');
  const node = type.instantiate({
    namespace: ns.sim,
    nodeId: `ns=${ns.sim.index};s=${machineID}.Programs`,
    browseName: { name: 'Programs', namespaceIndex: ns.sim.index },
    componentOf: root,
  }) as UAObject;
  const directory = new ProgramDirectory(opcua, ns, machineID, model, node);
  for (const entry of model.programList()) directory.addFile(entry.name);
  const method = (browseName: string) => node.getMethodByName(browseName) as UAMethod;
  bind(method('CreateFile'), (args, context) => directory.createFile(args[0]?.value, args[1]?.value, context));
  bind(method('Delete'), (args) => directory.deleteFile(args[0]?.value));
  for (const unsupported of ['CreateDirectory', 'MoveOrCopy']) {
    bind(method(unsupported), () => ({ statusCode: opcua.StatusCodes.BadNotSupported }));
  }
  return { stats: directory.stats };
}
