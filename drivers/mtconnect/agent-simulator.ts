/**
 * An MTConnect agent stand-in: an HTTP server answering /probe, /current,
 * /sample (one document, or a multipart/x-mixed-replace stream with
 * `interval` and `heartbeat`), /assets and /asset/{id}, for every machine
 * (one device each, named by its machineID) or under /{device}/…. Each
 * device plays the recorded lathe (replay.ts) through the driver's own SHDR
 * interpreter into an agent-like buffer (agent-buffer.ts), so its sequence
 * numbers, OUT_OF_RANGE and instanceId behave as an agent's. Tests can feed
 * their own lines, restart it (a new instanceId, an empty buffer), drop the
 * streams, or take a device's adapter away.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { ProtocolSimulatorOptions, RunningSimulator, SimulatedMachineSpec } from '../protocol-simulator.js';
import { AgentBuffer, agentTime, type BufferedObservation } from './agent-buffer.js';
import { assetsDocument, devicesDocument, errorDocument, parseOrdered, streamsDocument, type HeaderFacts, type OrderedNode } from './agent-documents.js';
import { DataItemIndex, type DataItem, type DeviceModel } from './device-model.js';
import { parseDevices, pickDevice } from './probe.js';
import { LATHE_DEVICES, loadLathe, Replay } from './replay.js';
import { ShdrInterpreter } from './shdr-interpreter.js';
import { startOffsetMs } from './simulator.js';

export interface AgentSimulatorOptions extends ProtocolSimulatorOptions {
  /** Observations the buffer holds (default 131,072, as agents keep). */
  bufferSize?: number;
  /** Play the recording (default true); false starts each device with its data items UNAVAILABLE. */
  replay?: boolean;
}

export interface RunningAgentSimulator extends RunningSimulator {
  readonly instanceId: number;
  /** The next sequence number the agent will hand out. */
  readonly nextSequence: number;
  /** Feeds one SHDR line to a device, as its adapter would. */
  feed(machineID: string, line: string): void;
  /** Takes a device's adapter away (every data item UNAVAILABLE) or gives it back (the current state again). */
  setAdapterConnected(machineID: string, connected: boolean): void;
  /** Drops every open stream, as a network blip would. */
  dropStreams(): void;
  /** A restart: a new instanceId, an empty buffer, every device's state sent again. */
  restart(): void;
}

interface SimDevice {
  spec: SimulatedMachineSpec;
  name: string;
  uuid: string;
  model: DeviceModel;
  node: OrderedNode;
  interpreter: ShdrInterpreter;
  replay: Replay;
  connected: boolean;
}

/** Rewrites the recorded device's ordered tree for a machine: its name and uuid, every id prefixed so ids are unique in the agent. */
function deviceNode(template: OrderedNode, spec: SimulatedMachineSpec, uuid: string): OrderedNode {
  const visit = (node: OrderedNode): OrderedNode => {
    const out: OrderedNode = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === ':@') {
        const attributes = { ...(value as Record<string, string>) };
        if (attributes.id) attributes.id = `${spec.machineID}_${attributes.id}`;
        out[key] = attributes;
      } else out[key] = Array.isArray(value) ? value.map((child) => (typeof child === 'object' && child ? visit(child as OrderedNode) : child)) : value;
    }
    return out;
  };
  const device = visit(template);
  device[':@'] = { ...(device[':@'] as Record<string, string>), name: spec.machineID, uuid };
  return device;
}

/** The Device element of the recorded lathe's Devices file, in ordered form. */
function latheDeviceTemplate(): OrderedNode {
  const root = parseOrdered(readFileSync(LATHE_DEVICES, 'utf8')).find((n) => 'MTConnectDevices' in n) as OrderedNode;
  const devices = (root.MTConnectDevices as OrderedNode[]).find((n) => 'Devices' in n) as OrderedNode;
  return (devices.Devices as OrderedNode[]).find((n) => 'Device' in n) as OrderedNode;
}

// eslint-disable-next-line max-lines-per-function -- the stand-in's state and its controls read best together
export async function startMtconnectAgentSimulator(options: AgentSimulatorOptions): Promise<RunningAgentSimulator> {
  const host = options.host ?? '127.0.0.1';
  const now = options.now ?? Date.now;
  const sender = `cnc-gateway-agent-simulator`;
  let instanceId = Math.floor(now() / 1000);
  let buffer = new AgentBuffer(options.bufferSize ?? 131_072);
  const facts = (): HeaderFacts => ({ instanceId, sender, buffer });
  const { recording } = loadLathe();
  const template = latheDeviceTemplate();
  const streams = new Set<http.ServerResponse>();
  const devices: SimDevice[] = options.machines.map((spec, index) => {
    const uuid = `cnc-gateway-sim-${spec.machineID}`;
    const node = deviceNode(template, spec, uuid);
    const xml = devicesDocument(facts(), [node]);
    const model = pickDevice(parseDevices(xml), spec.machineID, 'the stand-in');
    const device: Partial<SimDevice> = { spec, name: spec.machineID, uuid, model, node, connected: true };
    device.interpreter = interpreterFor(device as SimDevice, index);
    device.replay = new Replay(recording, model, {
      startMs: startOffsetMs(spec, recording.roundMs),
      timeScale: spec.timeScale ?? 1,
      now,
      emit: (text) => feedText(device as SimDevice, text),
    });
    return device as SimDevice;
  });

  function interpreterFor(device: SimDevice, index: number): ShdrInterpreter {
    const add = (item: DataItem, timestamp: number, extra: Partial<BufferedObservation>) =>
      buffer.add({ device: index, item, timestamp: agentTime(timestamp), value: '', ...extra });
    const assetChanged = () => device.model.dataItems.find((d) => d.type === 'ASSET_CHANGED');
    return new ShdrInterpreter(
      {
        index: new DataItemIndex(device.model), deviceNames: [device.name, device.uuid], maxFieldsPerLine: 4096, maxAssetChars: 1024 * 1024,
        maxClockAheadMs: 86_400_000, assetLimits: { maxChars: 1024 * 1024, maxDepth: 32, maxElements: 100_000, maxTextChars: 65_536 },
      },
      {
        value: (item, value, timestamp) => add(item, timestamp, { value }),
        condition: (item, report, timestamp) => add(item, timestamp, { condition: report }),
        asset: (asset, xml) => {
          // Asset ids are the agent's, across devices: each machine's recorded tools get its own.
          const assetId = `${device.name}_${asset.assetId}`;
          const root = parseOrdered(xml).find((n) => asset.type in n) as OrderedNode;
          const timestamp = agentTime(asset.timestamp ?? now());
          root[':@'] = { ...(root[':@'] as Record<string, string>), assetId, timestamp, deviceUuid: device.uuid };
          buffer.assets.set(assetId, { assetId, type: asset.type, device: index, timestamp, node: root });
          const changed = assetChanged();
          if (changed) add(changed, asset.timestamp ?? now(), { value: assetId, assetType: asset.type });
        },
        removeAsset: (assetId) => buffer.assets.delete(`${device.name}_${assetId}`),
        removeAllAssets: (type) => {
          for (const [id, asset] of buffer.assets) if (asset.device === index && (type === undefined || asset.type === type)) buffer.assets.delete(id);
        },
        command: () => undefined,
        problem: () => undefined,
      },
    );
  }

  function feedText(device: SimDevice, text: string): void {
    if (!device.connected) return;
    for (const line of text.split('\n')) if (line.trim() !== '') device.interpreter.feed(line.trimEnd(), now());
  }

  /** Every data item UNAVAILABLE, as an agent starts and as it marks a device whose adapter is gone. */
  function unavailable(device: SimDevice): void {
    const index = devices.indexOf(device);
    for (const item of device.model.dataItems) {
      buffer.add({ device: index, item, timestamp: agentTime(now()), value: 'UNAVAILABLE', ...(item.category === 'CONDITION' ? { condition: { level: 'UNAVAILABLE' as const } } : {}) });
    }
  }

  function bringUp(device: SimDevice): void {
    unavailable(device);
    if (options.replay !== false) for (const text of device.replay.snapshot()) feedText(device, text);
  }

  for (const device of devices) bringUp(device);

  const server = http.createServer((request, response) => {
    try {
      route(request, response);
    } catch (error) {
      send(response, 500, errorDocument(facts(), 'INTERNAL_ERROR', error instanceof Error ? error.message : String(error), { uri: request.url ?? '/' }));
    }
  });

  function send(response: http.ServerResponse, status: number, body: string): void {
    response.writeHead(status, { 'content-type': 'text/xml; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  }

  function route(request: http.IncomingMessage, response: http.ServerResponse): void {
    const url = new URL(request.url ?? '/', 'http://stand-in');
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const verbs = ['probe', 'current', 'sample', 'assets', 'asset'];
    const named = parts.length >= 2 && verbs.includes(parts[1] as string) && parts[0] !== 'asset';
    const selected = named ? devices.filter((d) => d.name === parts[0] || d.uuid === parts[0]) : devices;
    const verb = named ? parts[1] : parts[0];
    if (named && selected.length === 0) return send(response, 404, errorDocument(facts(), 'NO_DEVICE', `Could not find the device '${parts[0]}'`, { uri: url.pathname }));
    const indexes = new Set(selected.map((d) => devices.indexOf(d)));
    if (verb === 'probe') return send(response, 200, devicesDocument(facts(), selected.map((d) => d.node)));
    if (verb === 'current') return send(response, 200, current(indexes));
    if (verb === 'sample') return sample(url, indexes, response);
    if (verb === 'assets' || verb === 'asset') return assets(url, parts.slice(named ? 2 : 1), indexes, verb, response);
    send(response, 400, errorDocument(facts(), 'INVALID_REQUEST', `${url.pathname} is not a request this agent answers`, { uri: url.pathname }));
  }

  function current(indexes: ReadonlySet<number>): string {
    const observations = devices
      .filter((_, i) => indexes.has(i))
      .flatMap((d) => d.model.dataItems.flatMap((item) => buffer.current(item)))
      .sort((a, b) => a.sequence - b.sequence);
    return streamsDocument(facts(), devices, observations, buffer.next);
  }

  function intParam(url: URL, name: string, fallback: number): number | string {
    const raw = url.searchParams.get(name);
    if (raw === null) return fallback;
    return /^-?\d+$/.test(raw) ? Number(raw) : `'${name}' must be a whole number, found '${raw.slice(0, 32)}'`;
  }

  function sample(url: URL, indexes: ReadonlySet<number>, response: http.ServerResponse): void {
    const from = intParam(url, 'from', buffer.first);
    const count = intParam(url, 'count', 100);
    const interval = url.searchParams.has('interval') ? intParam(url, 'interval', 0) : undefined;
    const heartbeat = intParam(url, 'heartbeat', 10_000);
    for (const value of [from, count, interval, heartbeat]) if (typeof value === 'string') return send(response, 400, errorDocument(facts(), 'INVALID_REQUEST', value, { uri: url.pathname + url.search }));
    const range = (start: number) => buffer.range(start, Math.max(1, count as number), (o) => indexes.has(o.device));
    const outOfRange = (start: number) => start < buffer.first || start > buffer.next;
    if (outOfRange(from as number)) {
      const parameter = { name: 'from', value: from as number, minimum: buffer.first, maximum: buffer.next };
      return send(response, 404, errorDocument(facts(), 'OUT_OF_RANGE', `'from' must be between ${buffer.first} and ${buffer.next}; found ${from}`, { uri: url.pathname + url.search, parameter }));
    }
    if (interval === undefined) {
      const { observations, next } = range(from as number);
      return send(response, 200, streamsDocument(facts(), devices, observations, next));
    }
    stream(response, url.pathname + url.search, from as number, interval as number, heartbeat as number, range, outOfRange);
  }

  function stream(
    response: http.ServerResponse, uri: string, from: number, interval: number, heartbeat: number,
    range: (start: number) => { observations: BufferedObservation[]; next: number }, outOfRange: (start: number) => boolean,
  ): void {
    const boundary = randomBytes(16).toString('hex');
    response.writeHead(200, { 'content-type': `multipart/x-mixed-replace;boundary=${boundary}`, 'cache-control': 'no-cache' });
    streams.add(response);
    const instance = instanceId;
    let next = from;
    let lastSent = 0;
    const part = (body: string) => {
      // A client that does not read is dropped rather than buffered for without end.
      if (response.writableLength > 4 * 1024 * 1024) return response.destroy();
      response.write(`--${boundary}\r\nContent-type: text/xml\r\nContent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}\r\n`);
      lastSent = now();
    };
    const tick = () => {
      if (instance !== instanceId) return response.destroy();
      if (outOfRange(next)) {
        const parameter = { name: 'from', value: next, minimum: buffer.first, maximum: buffer.next };
        part(errorDocument(facts(), 'OUT_OF_RANGE', `the stream fell behind the buffer at ${next}`, { uri, parameter }));
        return response.end();
      }
      const { observations, next: after } = range(next);
      if (observations.length > 0 || after !== next || now() - lastSent >= heartbeat || lastSent === 0) {
        part(streamsDocument(facts(), devices, observations, after));
        next = after;
      }
    };
    const timer = setInterval(tick, Math.max(10, interval));
    response.on('close', () => {
      clearInterval(timer);
      streams.delete(response);
    });
    tick();
  }

  function assets(url: URL, ids: string[], indexes: ReadonlySet<number>, verb: string, response: http.ServerResponse): void {
    const type = url.searchParams.get('type');
    const count = intParam(url, 'count', 100);
    if (typeof count === 'string') return send(response, 400, errorDocument(facts(), 'INVALID_REQUEST', count, { uri: url.pathname + url.search }));
    if (verb === 'asset' || ids.length > 0) {
      const wanted = (ids[0] ?? '').split(';').filter(Boolean);
      const found = wanted.map((id) => buffer.assets.get(id));
      const missing = wanted.find((_, i) => !found[i]);
      if (missing !== undefined || wanted.length === 0) {
        return send(response, 404, errorDocument(facts(), 'ASSET_NOT_FOUND', `Could not find asset '${missing ?? ''}'`, { uri: url.pathname, assetId: missing ?? '' }));
      }
      return send(response, 200, assetsDocument(facts(), found.filter((a) => a !== undefined)));
    }
    const list = [...buffer.assets.values()].filter((a) => indexes.has(a.device) && (type === null || a.type === type)).slice(-Math.max(0, count));
    send(response, 200, assetsDocument(facts(), list));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  if (options.replay !== false) for (const device of devices) device.replay.start();
  const port = (server.address() as import('node:net').AddressInfo).port;
  const byId = (machineID: string) => {
    const device = devices.find((d) => d.name === machineID);
    if (!device) throw new Error(`the agent stand-in has no machine '${machineID}'`);
    return device;
  };
  let closing: Promise<void> | undefined;
  return {
    scheme: 'mtconnect-agent',
    host,
    port,
    get instanceId() {
      return instanceId;
    },
    get nextSequence() {
      return buffer.next;
    },
    feed: (machineID, line) => feedText(byId(machineID), line),
    setAdapterConnected: (machineID, connected) => {
      const device = byId(machineID);
      if (device.connected === connected) return;
      device.connected = connected;
      if (connected) bringUp(device);
      else unavailable(device);
    },
    dropStreams: () => {
      for (const response of [...streams]) response.destroy();
    },
    restart: () => {
      instanceId = Math.max(instanceId + 1, Math.floor(now() / 1000));
      buffer = new AgentBuffer(buffer.capacity);
      for (const response of [...streams]) response.destroy();
      for (const device of devices) if (device.connected) bringUp(device);
    },
    describe: () => [
      `MTConnect agent stand-in with ${devices.length} device(s), each the recorded lathe: ${devices.map((d) => d.name).join(', ')}`,
      `probe it at http://${host}:${port}/probe; read a device with "driver": "mtconnect", "ip": "${host}", "port": ${port}, driverOptions { "agent": {}, "device": "<machineID>" }`,
    ],
    machineConfig: (machine) => ({
      machineID: machine.machineID,
      name: `${machine.machineID} (MTConnect agent)`,
      system: machine.system,
      machineType: machine.machineType,
      driver: 'mtconnect',
      ip: host,
      port,
      driverOptions: { agent: {}, device: machine.machineID },
    }),
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        for (const device of devices) device.replay.stop();
        for (const response of [...streams]) response.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
