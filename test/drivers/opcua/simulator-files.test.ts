/**
 * The OPC UA simulator's program directory as any OPC UA client sees it,
 * through plain method calls (no gateway driver): FileType and
 * FileDirectoryType behave as OPC 10000-5 Annex C says, so what the driver is
 * tested against is the standard, not a private variant of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientSession, OPCUAClient, Variant } from 'node-opcua';
import { loadOpcua, type OpcuaModule } from '../../../drivers/opcua/connection.js';
import { startOpcuaServer, type RunningOpcuaSimulator } from '../../../drivers/opcua/simulator.js';
import { MILL } from './helpers.js';

const DIR = '//CNC_MEM/USER/PATH1/';
let opcua: OpcuaModule;
let sim: RunningOpcuaSimulator;
let clients: OPCUAClient[] = [];
let ns = 0;

async function session(): Promise<ClientSession> {
  const client = opcua.OPCUAClient.create({ endpointMustExist: false, connectionStrategy: { maxRetry: 0 } });
  clients.push(client);
  await client.connect(`opc.tcp://127.0.0.1:${sim.port}`);
  return client.createSession();
}

const id = (path: string) => `ns=${ns};s=${MILL.machineID}.${path}`;
/** Calls `method` of the object at `path` by its instance method node, answering the status name and the outputs. */
async function call(s: ClientSession, path: string, method: string, args: Array<[keyof OpcuaModule['DataType'], unknown]>): Promise<{ status: string; out: Variant[] }> {
  const methods = await s.browse({ nodeId: id(path), browseDirection: 0, referenceTypeId: 'i=47', includeSubtypes: true, nodeClassMask: 0, resultMask: 0x3f });
  const methodId = methods.references?.find((r) => r.browseName.name === method)?.nodeId;
  if (!methodId) throw new Error(`${path} has no method ${method}`);
  const inputArguments = args.map(([dataType, value]) => new opcua.Variant({ dataType: opcua.DataType[dataType], arrayType: opcua.VariantArrayType.Scalar, value }));
  const result = await s.call({ objectId: id(path), methodId, inputArguments });
  return { status: result.statusCode.name, out: result.outputArguments ?? [] };
}

beforeAll(async () => {
  opcua = await loadOpcua();
  sim = await startOpcuaServer({ machines: [MILL], securityModes: ['None'] });
  const s = await session();
  const [array] = await s.read([{ nodeId: 'i=2255', attributeId: opcua.AttributeIds.Value }]);
  ns = (array?.value.value as string[]).indexOf('urn:cnc-gateway:opcua-simulator');
}, 30_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.disconnect()));
  clients = [];
  await sim?.close();
});

describe('the OPC UA simulator\'s program directory, through plain method calls', () => {
  it('CreateFile opens the new file; Write, GetPosition, SetPosition, Read and Close follow the standard; a duplicate name is refused', async () => {
    const s = await session();
    const created = await call(s, 'Programs', 'CreateFile', [['String', 'O5001'], ['Boolean', true]]);
    expect(created.status).toBe('Good');
    const handle = Number(created.out[1]?.value);
    expect(String(created.out[0]?.value)).toBe(id('Programs.O5001'));
    expect((await call(s, 'Programs.O5001', 'Write', [['UInt32', handle], ['ByteString', Buffer.from('%\r\nO5001\r\n')]])).status).toBe('Good');
    expect((await call(s, 'Programs.O5001', 'Write', [['UInt32', handle], ['ByteString', Buffer.from('M30\r\n%\r\n')]])).status).toBe('Good');
    const position = await call(s, 'Programs.O5001', 'GetPosition', [['UInt32', handle]]);
    expect(position.out[0]?.value).toEqual([0, 18]);
    expect((await call(s, 'Programs.O5001', 'SetPosition', [['UInt32', handle], ['UInt64', [0, 3]]])).status).toBe('Good');
    expect((await call(s, 'Programs.O5001', 'Read', [['UInt32', handle], ['Int32', 5]])).out[0]?.value).toEqual(Buffer.from('O5001'));
    expect((await call(s, 'Programs.O5001', 'Close', [['UInt32', handle]])).status).toBe('Good');
    expect(sim.machine(MILL.machineID).download(DIR, 'O5001')?.toString('latin1')).toBe('%\r\nO5001\r\nM30\r\n%\r\n');
    expect((await call(s, 'Programs', 'CreateFile', [['String', 'O5001'], ['Boolean', false]])).status).toBe('BadBrowseNameDuplicated');
  });

  it('a handle belongs to its session, a file being written cannot be opened again, Append writes at the end, Delete removes the file', async () => {
    const [a, b] = [await session(), await session()];
    const writing = Number((await call(a, 'Programs', 'CreateFile', [['String', 'O5002'], ['Boolean', true]])).out[1]?.value);
    expect((await call(b, 'Programs.O5002', 'Write', [['UInt32', writing], ['ByteString', Buffer.from('X')]])).status).toBe('BadInvalidState');
    expect((await call(b, 'Programs.O5002', 'Open', [['Byte', 1]])).status).toBe('BadNotWritable');
    await call(a, 'Programs.O5002', 'Write', [['UInt32', writing], ['ByteString', Buffer.from('%\nO5002\n')]]);
    await call(a, 'Programs.O5002', 'Close', [['UInt32', writing]]);
    const appending = Number((await call(b, 'Programs.O5002', 'Open', [['Byte', 0x8 | 0x2]])).out[0]?.value);
    await call(b, 'Programs.O5002', 'Write', [['UInt32', appending], ['ByteString', Buffer.from('M30\n%\n')]]);
    await call(b, 'Programs.O5002', 'Close', [['UInt32', appending]]);
    expect(sim.machine(MILL.machineID).download(DIR, 'O5002')?.toString('latin1')).toBe('%\nO5002\nM30\n%\n');
    expect((await call(a, 'Programs', 'Delete', [['NodeId', opcua.resolveNodeId(id('Programs.O5002'))]])).status).toBe('Good');
    const left = await a.browse({ nodeId: id('Programs'), browseDirection: 0, referenceTypeId: 'i=33', includeSubtypes: true, nodeClassMask: 0, resultMask: 0x3f });
    expect(left.references?.map((r) => r.browseName.name)).not.toContain('O5002');
    expect((await call(a, 'Programs', 'CreateDirectory', [['String', 'SUB']])).status).toBe('BadNotSupported');
  });
});
