/**
 * Tracing's configuration: off unless an endpoint is given, the standard
 * OTEL_* variables over the `telemetry` section, mistakes named by their
 * variable or path, one service name per role, and no SDK loaded when off.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../core/config/config.js';
import { CONFIG_PARTS } from '../../../core/roles/index.js';
import { resolveTelemetry, serviceNames, type TelemetrySection } from '../../../core/telemetry/settings.js';
import { startTelemetry } from '../../../core/telemetry/start.js';
import { tracingEnabled } from '../../../core/telemetry/tracing.js';

const ROLES = ['gateway', 'programs', 'cloud'];
const section = (raw: unknown): TelemetrySection => parseConfig({ telemetry: raw }, 'test.json', {}, CONFIG_PARTS).telemetry;

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('tracing configuration', () => {
  it('no OTEL variable and no telemetry section: tracing stays off and the SDK is never loaded', async () => {
    expect(resolveTelemetry(section({}), {}, ROLES)).toBeUndefined();
    let loaded = 0;
    const telemetry = await startTelemetry(section({}), { OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' }, ROLES, {
      load: () => {
        loaded++;
        throw new Error('the SDK must not be loaded');
      },
    });
    expect(telemetry.on).toBe(false);
    expect(loaded).toBe(0);
    expect(tracingEnabled()).toBe(false);
  });

  it('OTEL_EXPORTER_OTLP_ENDPOINT turns it on: traces go to <endpoint>/v1/traces over protobuf, sampled parent-based at ratio 1', () => {
    const settings = resolveTelemetry(section({}), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, ROLES);
    expect(settings).toMatchObject({ tracesUrl: 'http://collector:4318/v1/traces', protocol: 'http/protobuf', sampler: 'parentbased_traceidratio', samplerArg: 1 });
    expect(settings?.serviceNames).toEqual({ gateway: 'cncgw-gateway', programs: 'cncgw-programs', cloud: 'cncgw-cloud' });
  });

  it('the variables win over the telemetry section, field by field; headers and resource attributes merge', () => {
    const fromFile = section({ endpoint: 'http://file:4318', protocol: 'http/json', sampler: 'always_on', samplerArg: 0.5, headers: { 'x-a': '1' }, resourceAttributes: { 'deployment.environment.name': 'prod' } });
    expect(resolveTelemetry(fromFile, {}, ['gateway'])).toMatchObject({ tracesUrl: 'http://file:4318/v1/traces', protocol: 'http/json', sampler: 'always_on', samplerArg: 0.5 });
    const env = {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-honeycomb-team=abc%3D,x-b=2',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
      OTEL_RESOURCE_ATTRIBUTES: 'host.name=cell-4',
      OTEL_SERVICE_NAME: 'plant',
    };
    expect(resolveTelemetry(fromFile, env, ['gateway', 'programs'])).toEqual({
      tracesUrl: 'https://traces.example/otlp',
      protocol: 'http/protobuf',
      headers: { 'x-a': '1', 'x-honeycomb-team': 'abc=', 'x-b': '2' },
      serviceNames: { gateway: 'plant-gateway', programs: 'plant-programs' },
      sampler: 'parentbased_traceidratio',
      samplerArg: 0.1,
      resourceAttributes: { 'deployment.environment.name': 'prod', 'host.name': 'cell-4' },
    });
  });

  it('one service name per role: cncgw-<role> by default; a configured name alone for one role, as the prefix for several', () => {
    expect(serviceNames(['gateway', 'cloud'], undefined)).toEqual({ gateway: 'cncgw-gateway', cloud: 'cncgw-cloud' });
    expect(serviceNames(['cloud'], 'relay-eu')).toEqual({ cloud: 'relay-eu' });
  });

  it('OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none keep it off even with an endpoint', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(resolveTelemetry(undefined, { ...on, OTEL_SDK_DISABLED: 'true' }, ROLES)).toBeUndefined();
    expect(resolveTelemetry(undefined, { ...on, OTEL_TRACES_EXPORTER: 'none' }, ROLES)).toBeUndefined();
  });

  it('a wrong variable is refused at start naming it and what it accepts', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(problemsOf(() => resolveTelemetry(undefined, { ...on, OTEL_TRACES_SAMPLER: 'sometimes' }, ROLES))[0]).toMatch(/^OTEL_TRACES_SAMPLER: found "sometimes"; expected one of "parentbased_traceidratio"/);
    expect(problemsOf(() => resolveTelemetry(undefined, { ...on, OTEL_TRACES_SAMPLER_ARG: '2' }, ROLES))[0]).toMatch(/^OTEL_TRACES_SAMPLER_ARG: .*a number from 0 to 1/);
    expect(problemsOf(() => resolveTelemetry(undefined, { ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, ROLES))[0]).toMatch(/^OTEL_EXPORTER_OTLP_PROTOCOL: found "grpc"; expected one of "http\/protobuf", "http\/json"/);
    expect(problemsOf(() => resolveTelemetry(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, ROLES))[0]).toMatch(/^OTEL_EXPORTER_OTLP_ENDPOINT: .*http:\/\/ or https:\/\/ URL/);
    expect(problemsOf(() => resolveTelemetry(undefined, { ...on, OTEL_EXPORTER_OTLP_HEADERS: 'novalue' }, ROLES))[0]).toMatch(/^OTEL_EXPORTER_OTLP_HEADERS: .*key=value/);
  });

  it('a mistake in the telemetry section is named by its path', () => {
    expect(problemsOf(() => section({ sampler: 'sometimes' })).join('\n')).toMatch(/telemetry\.sampler/);
    expect(problemsOf(() => section({ samplerArg: 3 })).join('\n')).toMatch(/telemetry\.samplerArg/);
    expect(problemsOf(() => section({ endpoint: 'ftp://x' })).join('\n')).toMatch(/telemetry\.endpoint/);
    expect(problemsOf(() => section({ exporter: 'zipkin' })).join('\n')).toMatch(/telemetry.*exporter/);
  });
});
