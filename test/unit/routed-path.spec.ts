import { routedPath } from '../../src/http/parse/routed-path.js';

const express = (path: string, params: Record<string, unknown>) => routedPath({ route: { path }, params });
const fastify = (url: string, params: Record<string, unknown>) => routedPath({ routeOptions: { url }, params });

describe('routedPath: the scope of a request is its route template with the values the handler receives', () => {
  it('fills plain parameters, encoded, a "/" in a value included', () => {
    expect(express('/payments/:id/refunds', { id: 'a b' })).toBe('/payments/a%20b/refunds');
    expect(express('/payments/:id', { id: 'a/b' })).toBe('/payments/a%2Fb');
    expect(express('/payments/:id', { id: 'a-b.c' })).toBe('/payments/a-b.c');
  });

  it('encodes the separators of parameters sharing a segment, so that other splits stay other paths', () => {
    expect(express('/transfers/:from-:to', { from: 'A', to: 'B-C' })).toBe('/transfers/A-B%2DC');
    expect(express('/transfers/:from-:to', { from: 'A-B', to: 'C' })).toBe('/transfers/A%2DB-C');
    expect(express('/files/:name.:ext', { name: 'a.b', ext: 'c' })).toBe('/files/a%2Eb.c');
    expect(express('/docs/:name{.:ext}', { name: 'report.tar', ext: 'gz' })).toBe('/docs/report%2Etar.gz');
    expect(express('/docs/:name{.:ext}', { name: 'report.tar.gz' })).toBe('/docs/report%2Etar%2Egz');
    expect(express('/range/:from{-:to}', { from: '1-2', to: '3' })).toBe('/range/1%2D2-3');
    expect(express('/w/*path{.:ext}', { path: ['a', 'b'], ext: 'c' })).toBe('/w/a/b.c');
    expect(express('/w/*path{.:ext}', { path: ['a', 'b.c'] })).toBe('/w/a/b%2Ec');
    expect(express('/orders{/:id}', { id: 'a.b' })).toBe('/orders/a.b');
  });

  it('names parameters as the routers do, in any script; a parameter it cannot place gives up', () => {
    expect(express('/accounts/:счёт/transfers', { счёт: 'A-111' })).toBe('/accounts/A-111/transfers');
    expect(fastify('/accounts/:numéro', { numéro: '7' })).toBe('/accounts/7');
    expect(express('/accounts/:id', { id: '7', other: 'x' })).toBeUndefined();
  });

  it('fills wildcards segment by segment: a list (Express 5) or a string (Fastify)', () => {
    expect(express('/files/{*path}', { path: ['a', 'b'] })).toBe('/files/a/b');
    expect(express('/files/{*path}', { path: ['a/b'] })).toBe('/files/a%2Fb');
    expect(express('/files/*path/meta', { path: ['x', 'y z'] })).toBe('/files/x/y%20z/meta');
    expect(express('/files/{*path}', {})).toBe('/files/');
    expect(fastify('/files/*', { '*': 'a/b c/' })).toBe('/files/a/b%20c/');
    expect(fastify('/files/*', { '*': '' })).toBe('/files/');
  });

  it('leaves out an optional parameter or group that did not match', () => {
    expect(express('/orders{/:id}', {})).toBe('/orders');
    expect(express('/orders{/:id}', { id: '7' })).toBe('/orders/7');
    expect(express('/a{/:b{/:c}}', { b: 'x' })).toBe('/a/x');
    expect(express('/a{/:b{/:c}}', { b: 'x', c: 'y' })).toBe('/a/x/y');
    expect(fastify('/orders/:id?', {})).toBe('/orders');
    expect(fastify('/orders/:id?', { id: '7' })).toBe('/orders/7');
  });

  it('gives up (the path as sent is used) on patterns, on a missing required parameter, on unknown syntax', () => {
    expect(fastify('/orders/:id(^\\d+$)', { id: '1' })).toBeUndefined();
    expect(express('/orders/:id', {})).toBeUndefined();
    expect(express('/files/*path', {})).toBeUndefined();
    expect(express('/a{/:b', { b: 'x' })).toBeUndefined();
    expect(express('/a/:b}', { b: 'x' })).toBeUndefined();
    expect(express('/ab?c', {})).toBeUndefined();
    expect(express('/a/\\:b', {})).toBeUndefined();
    expect(routedPath({ params: {} })).toBeUndefined();
  });
});
