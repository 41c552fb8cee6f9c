/**
 * Programs over OPC UA file transfer (OPC 10000-5 Annex C): the program
 * directory is a FileDirectoryType object, each program a FileType object in
 * it, read and written through the file's Open, Read, Write and Close
 * methods in pieces no longer than the server's MaxByteStringLength. Bytes
 * travel as ByteStrings, so every byte arrives as it was sent.
 */
import type { Variant } from 'node-opcua';
import type { CurrentProgram, ProgramFileEntry, ReadOptions } from '../../core/driver-seam/driver.js';
import { GatewayError } from '../../core/interfaces/errors.js';
import type { AddressSpaceBrowser, ChildRef, MachineLayout } from './address-space.js';
import type { OpcuaLink } from './connection.js';
import type { OpcuaOptions } from './options.js';
import { numberOf } from './readings.js';
import { textOf } from './text-value.js';

const FILE_TYPE = 'i=11575';
const FILE_DIRECTORY_TYPE = 'i=13353';
const HAS_TYPE_DEFINITION = 'i=40';
/** Server/ServerCapabilities/MaxByteStringLength. */
const MAX_BYTE_STRING_LENGTH = 'i=12911';
/** OPC 10000-5 C.2.1 open mode bits. */
const OPEN = { read: 0x1, write: 0x2, eraseExisting: 0x4 } as const;
/** A download stops here: no NC program is this long, and a server whose Size is wrong must not fill the memory. */
const MAX_PROGRAM_BYTES = 64 * 1024 * 1024;

/** `ns=0;i=11575` and `i=11575` name the same node. */
const sameNode = (a: string, b: string) => a.replace(/^ns=0;/, '') === b.replace(/^ns=0;/, '');

/** The NodeIds of one file's methods and Size, found by browsing it. */
interface FileNodes {
  nodeId: string;
  size: string | undefined;
  open: string;
  close: string;
  read: string;
  write: string;
}

/** Where the programs are, or why there are none. */
export type ProgramDirectoryLookup = { directory: ProgramDirectory; missing?: undefined } | { directory?: undefined; missing: string };

/** Finds the program directory: `programDirectory` when given, else the first FileDirectoryType object under the machine. */
export async function findProgramDirectory(link: OpcuaLink, browser: AddressSpaceBrowser, layout: MachineLayout, options: OpcuaOptions): Promise<ProgramDirectoryLookup> {
  let found: { nodeId: string; name: string } | undefined;
  if (options.programDirectory !== undefined) {
    const nodeId = browser.resolveNodeId(options.programDirectory);
    const types = await link.request(`browse ${nodeId}`, (session) =>
      session.browse({ nodeId, browseDirection: 0, referenceTypeId: HAS_TYPE_DEFINITION, includeSubtypes: false, nodeClassMask: 0, resultMask: 0x3f }),
    );
    if (!(types.references ?? []).some((r) => sameNode(r.nodeId.toString(), FILE_DIRECTORY_TYPE))) {
      return { missing: `driverOptions.programDirectory (${options.programDirectory}) is not a FileDirectoryType object on this server (${types.statusCode.name})` };
    }
    const [browseName] = await link.request(`read ${nodeId}`, (session) => session.read([{ nodeId, attributeId: link.opcua.AttributeIds.BrowseName }]));
    const name: unknown = browseName?.value.value;
    found = { nodeId, name: name && typeof name === 'object' && 'name' in name ? String(name.name) : nodeId };
  } else if (layout.machineNodeId !== undefined) {
    found = (await browser.children(layout.machineNodeId)).find((c) => sameNode(c.type, FILE_DIRECTORY_TYPE));
    if (!found) return { missing: `machine '${layout.machine}' has no program directory (a FileDirectoryType object) on this server, and driverOptions.programDirectory names none` };
  } else {
    return { missing: 'this server has no machine under Objects/Machines to find a program directory in, and driverOptions.programDirectory names none' };
  }
  const [limit] = await link.readValues('read MaxByteStringLength', [MAX_BYTE_STRING_LENGTH]);
  const serverLimit = numberOf(limit) ?? 0;
  const chunkBytes = serverLimit > 0 ? Math.min(serverLimit, options.transferChunkBytes) : options.transferChunkBytes;
  return { directory: new ProgramDirectory(link, browser, found.nodeId, options.programDir ?? `/${found.name}/`, chunkBytes) };
}

/** One program directory of a connected server. */
export class ProgramDirectory {
  constructor(
    private readonly link: OpcuaLink,
    private readonly browser: AddressSpaceBrowser,
    readonly nodeId: string,
    /** The directory's name in program calls and listings (`dir`). */
    readonly dir: string,
    /** Largest piece of one Read or Write. */
    readonly chunkBytes: number,
  ) {}

  /** Throws unless `dir` (with `subDir`) names this directory. */
  private checkDir(dir: string, subDir?: string): void {
    const normalise = (d: string) => (d.endsWith('/') ? d : `${d}/`);
    const wanted = normalise(subDir ? normalise(dir) + subDir.replace(/^\/+/, '') : dir);
    if (wanted !== this.dir) {
      throw new GatewayError('INVALID_PARAMETER', `opcua: dir must be ${this.dir}, the program directory this driver serves (driverOptions.programDir); got '${wanted}'`);
    }
  }

  /** The programs in the directory with their sizes, by name; `startPrgNo` keeps the names O<n> with n at least it. */
  async list(options: ReadOptions): Promise<ProgramFileEntry[]> {
    this.checkDir(options.dir ?? this.dir, options.subDir);
    const from = options.startPrgNo;
    const files = (await this.files()).filter((f) => from === undefined || Number(/^O(\d+)/i.exec(f.name)?.[1] ?? -1) >= from);
    const { makeBrowsePath } = this.link.opcua;
    const paths = await this.link.request('find the programs\' sizes', (session) => session.translateBrowsePath(files.map((f) => makeBrowsePath(f.nodeId, '/Size'))));
    const sizeIds = paths.map((p) => p.targets?.[0]?.targetId.toString());
    const wanted = sizeIds.filter((id): id is string => id !== undefined);
    const values = await this.link.readValues('read the programs\' sizes', wanted);
    const sizes = new Map(wanted.map((id, i) => [id, numberOf(values[i])]));
    return files
      .map((f, i) => ({ dir: this.dir, name: f.name, size: sizes.get(sizeIds[i] ?? '') ?? 0 }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** A program's bytes, read in pieces until its Size (or the end of the file). */
  async download(dir: string, name: string): Promise<Buffer> {
    this.checkDir(dir);
    const file = await this.fileNodes(await this.file(name));
    const size = file.size === undefined ? undefined : numberOf((await this.link.readValues(`read the size of ${name}`, [file.size]))[0]);
    const handle = await this.open(file, name, OPEN.read);
    const pieces: Buffer[] = [];
    let got = 0;
    try {
      while (size === undefined || size === 0 || got < size) {
        const want = size ? Math.min(this.chunkBytes, size - got) : this.chunkBytes;
        const [data] = await this.call(`read ${name}`, file.nodeId, file.read, [{ type: 'UInt32', value: handle }, { type: 'Int32', value: want }]);
        const piece: unknown = data?.value;
        if (!Buffer.isBuffer(piece) || piece.length === 0) break;
        pieces.push(piece);
        got += piece.length;
        if (got > MAX_PROGRAM_BYTES) throw new GatewayError('DRIVER_REQUEST_FAILED', `opcua: program ${name} is longer than ${MAX_PROGRAM_BYTES} bytes`);
      }
    } finally {
      await this.close(file, name, handle);
    }
    return Buffer.concat(pieces, got);
  }

  /** Writes a program: CreateFile when it is new, else Open with EraseExisting; then Write in pieces and Close. */
  async upload(dir: string, name: string, content: Buffer): Promise<void> {
    this.checkDir(dir);
    if (name.trim() === '' || /[/\\]/.test(name)) throw new GatewayError('INVALID_PARAMETER', `opcua: name must be a file name without '/' or '\\'; got '${name}'`);
    const children = await this.browser.children(this.nodeId);
    const existing = children.find((c) => c.name === name && sameNode(c.type, FILE_TYPE));
    let file: FileNodes;
    let handle: number;
    if (existing) {
      file = await this.fileNodes(existing);
      handle = await this.open(file, name, OPEN.write | OPEN.eraseExisting);
    } else {
      const createFile = children.find((c) => c.ns === 0 && c.name === 'CreateFile');
      if (!createFile) throw new GatewayError('DRIVER_REQUEST_FAILED', `opcua: the program directory ${this.dir} (${this.nodeId}) has no CreateFile method`);
      const [nodeId, opened] = await this.call(`create ${name}`, this.nodeId, createFile.nodeId, [{ type: 'String', value: name }, { type: 'Boolean', value: true }]);
      file = await this.fileNodes({ nodeId: String(nodeId?.value), ns: 0, name, type: FILE_TYPE });
      handle = Number(opened?.value ?? 0);
      // A server may create the file without opening it.
      if (handle === 0) handle = await this.open(file, name, OPEN.write | OPEN.eraseExisting);
    }
    try {
      for (let at = 0; at < content.length; at += this.chunkBytes) {
        await this.call(`write ${name}`, file.nodeId, file.write, [{ type: 'UInt32', value: handle }, { type: 'ByteString', value: content.subarray(at, at + this.chunkBytes) }]);
      }
    } catch (error) {
      await this.close(file, name, handle).catch(() => undefined);
      throw error;
    }
    await this.close(file, name, handle);
  }

  /** The active program (ActiveProgram/Name of the model) read from the directory. */
  async current(layout: MachineLayout): Promise<CurrentProgram> {
    const nameNode = layout.nodes.programName;
    const [value] = nameNode === undefined ? [] : await this.link.readValues('read the active program', [nameNode]);
    const name = textOf(value)?.trim() ?? '';
    if (name === '') throw new GatewayError('PROGRAM_NOT_FOUND', 'opcua: the machine has no active program');
    return { dir: this.dir, name, content: await this.download(this.dir, name) };
  }

  private async files(): Promise<ChildRef[]> {
    return (await this.browser.children(this.nodeId)).filter((c) => sameNode(c.type, FILE_TYPE));
  }

  private async file(name: string): Promise<ChildRef> {
    const file = (await this.files()).find((f) => f.name === name);
    if (!file) throw new GatewayError('PROGRAM_NOT_FOUND', `opcua: no program '${name}' in '${this.dir}'`);
    return file;
  }

  private async fileNodes(file: ChildRef): Promise<FileNodes> {
    const kids = await this.browser.children(file.nodeId);
    const std = (name: string) => kids.find((k) => k.ns === 0 && k.name === name)?.nodeId;
    const [open, close, read, write] = ['Open', 'Close', 'Read', 'Write'].map(std);
    if (!open || !close || !read || !write) throw new GatewayError('DRIVER_REQUEST_FAILED', `opcua: ${file.name} (${file.nodeId}) lacks the FileType methods Open, Close, Read and Write`);
    return { nodeId: file.nodeId, size: std('Size'), open, close, read, write };
  }

  private async open(file: FileNodes, name: string, mode: number): Promise<number> {
    const [handle] = await this.call(`open ${name}`, file.nodeId, file.open, [{ type: 'Byte', value: mode }]);
    return Number(handle?.value ?? 0);
  }

  private async close(file: FileNodes, name: string, handle: number): Promise<void> {
    await this.call(`close ${name}`, file.nodeId, file.close, [{ type: 'UInt32', value: handle }]);
  }

  /** Calls a method; anything but Good is DRIVER_REQUEST_FAILED naming the call and the status. */
  private async call(what: string, objectId: string, methodId: string, args: Array<{ type: 'UInt32' | 'Int32' | 'Byte' | 'String' | 'Boolean' | 'ByteString'; value: unknown }>): Promise<Variant[]> {
    const { DataType, Variant: V } = this.link.opcua;
    const inputArguments = args.map((a) => new V({ dataType: DataType[a.type], value: a.value }));
    const result = await this.link.request(what, (session) => session.call({ objectId, methodId, inputArguments }));
    if (!result.statusCode.isGood()) throw new GatewayError('DRIVER_REQUEST_FAILED', `opcua: ${what} answered ${result.statusCode.name}`);
    return result.outputArguments ?? [];
  }
}
