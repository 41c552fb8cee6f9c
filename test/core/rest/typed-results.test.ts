/**
 * The results a handler of /api/v1 may give are checked by the compiler: one
 * of the operation's statuses, with that status's body. The `@ts-expect-error`
 * lines below are the proof; `npm run typecheck` fails if any of them compiles.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { defineOperation, RestRegistry, type AnyRestOperation, type RestRawBody, type RestResultOf } from '../../../core/rest/operation.js';

const spec = { operationId: 'getThing', method: 'GET', path: '/things/{id}', summary: 'A thing', tags: ['things'], permission: null } as const;
const thing = z.object({ id: z.string(), size: z.number().int() });
const responses = {
  200: { description: 'The thing', schema: thing },
  204: { description: 'Nothing to say' },
  206: { description: 'Its bytes', contentType: 'application/octet-stream' },
} as const;

describe('typed results of /api/v1 handlers', () => {
  it('a result is one of the statuses with its body', () => {
    type Result = RestResultOf<typeof responses>;
    expectTypeOf<Extract<Result, { status: 200 }>['body']>().toEqualTypeOf<{ id: string; size: number }>();
    expectTypeOf<Extract<Result, { status: 206 }>['body']>().toEqualTypeOf<RestRawBody>();
    expectTypeOf<Extract<Result, { status: 204 }>['body']>().toEqualTypeOf<undefined>();
    expectTypeOf<Result['status']>().toEqualTypeOf<200 | 204 | 206>();
  });

  it('a handler giving a declared status and body compiles, and the registry serves it untyped', async () => {
    const op = defineOperation({
      ...spec,
      params: z.object({ id: z.string() }),
      responses,
      handler: ({ params }) => (params.id === 'none' ? { status: 204 } : { status: 200, body: { id: params.id, size: 1 } }),
    });
    const registry = new RestRegistry();
    registry.define(op);
    const served: AnyRestOperation = registry.list()[0]!;
    expect(served.operationId).toBe('getThing');
    expect(await op.handler({ params: { id: 't1' }, query: undefined, body: undefined }, undefined as never)).toEqual({ status: 200, body: { id: 't1', size: 1 } });
  });

  it('a wrong status, a wrong body or a missing body does not compile', () => {
    const ops: AnyRestOperation[] = [
      defineOperation({
        ...spec,
        responses,
        // @ts-expect-error 201 is not one of the operation's statuses
        handler: () => ({ status: 201, body: { id: 'a', size: 1 } }),
      }),
      defineOperation({
        ...spec,
        responses,
        // @ts-expect-error size must be a number
        handler: () => ({ status: 200, body: { id: 'a', size: 'big' } }),
      }),
      defineOperation({
        ...spec,
        responses,
        // @ts-expect-error 200 needs its body
        handler: () => ({ status: 200 }),
      }),
      defineOperation({
        ...spec,
        responses,
        // @ts-expect-error 204 carries no body
        handler: () => ({ status: 204, body: { id: 'a', size: 1 } }),
      }),
    ];
    expect(ops).toHaveLength(4);
  });

  it('a response of another content type carries bytes or streamed text', () => {
    const op = defineOperation({
      ...spec,
      responses,
      handler: () => ({ status: 206, body: Buffer.from('G0 X1') }),
    });
    expect(op.operationId).toBe('getThing');
    defineOperation({
      ...spec,
      responses,
      // @ts-expect-error a JSON value is not bytes
      handler: () => ({ status: 206, body: { id: 'a', size: 1 } }),
    });
  });
});
