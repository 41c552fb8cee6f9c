/**
 * What the cloud peer tests ask of a cloud's token admin interface and of a
 * real broker, written once for every test that needs them.
 */
import mqtt from 'mqtt';

/** A call of `/admin/gateway-tokens{path}` on the cloud at `base`: GET without a body, POST with one. */
export async function tokenAdmin(base: string, adminKey: string, path: string, body?: object): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(new URL(`/admin/gateway-tokens${path}`, base), {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${adminKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** Whether the broker at `brokerUrl` takes these credentials now: 'accepted', or its refusal. */
export async function brokerTakes(brokerUrl: string, username: string, password: string): Promise<string> {
  try {
    const c = await mqtt.connectAsync(brokerUrl, { username, password, protocolVersion: 5, reconnectPeriod: 0, connectTimeout: 5000 });
    await c.endAsync(true);
    return 'accepted';
  } catch (err) {
    return (err as Error).message;
  }
}
