/**
 * Tool life as CuttingTool assets: each tool life record a machine's driver
 * gives (the ToolLife task's cached sample; no machine is contacted) is one
 * asset, `<machine>_T<tool>.G<group>`, timestamped when the tool life was
 * sampled. Counted life is PART_COUNT, timed life MINUTES, counting up to
 * the limit; a tool whose life is used up is EXPIRED, one not yet used NEW,
 * else USED.
 */
import type { ToolLifeRecord } from '../../core/driver-seam/driver.js';
import type { ToolAsset } from './documents.js';
import type { GatewayReader } from './gateway-reader.js';
import { idBase, type DeviceModel } from './model.js';

function toolAsset(machineID: string, deviceUuid: string, record: ToolLifeRecord, sampledAt: number): ToolAsset {
  const status = record.remainingPercent <= 0 ? 'EXPIRED' : record.used <= 0 ? 'NEW' : 'USED';
  return {
    assetId: `${idBase(machineID)}_T${record.toolNum}.G${record.groupNum}`,
    toolId: String(record.toolNum),
    deviceUuid,
    timestamp: sampledAt,
    status,
    lifeType: record.unit === 'minutes' ? 'MINUTES' : 'PART_COUNT',
    used: record.used,
    limit: record.limit,
    group: record.groupNum,
    toolNumber: record.toolNum,
  };
}

/** The tool assets of the model's machines (of one device when given), newest first as agents list assets. */
export function toolAssets(reader: GatewayReader, model: DeviceModel, deviceUuid?: string): ToolAsset[] {
  const out: ToolAsset[] = [];
  for (const device of model.devices) {
    if (device.element !== 'Device' || device.name === undefined || device.uuid === undefined) continue;
    if (deviceUuid !== undefined && device.uuid !== deviceUuid) continue;
    const life = reader.toolLife(device.name);
    if (!life) continue;
    const seen = new Set<string>();
    for (const record of life.records) {
      const asset = toolAsset(device.name, device.uuid, record, life.sampledAt);
      if (seen.has(asset.assetId)) continue;
      seen.add(asset.assetId);
      out.push(asset);
    }
  }
  return out.sort((a, b) => b.timestamp - a.timestamp || (a.assetId < b.assetId ? -1 : 1));
}
