import type { KubeObject } from '@app/apimachinery';
import { kubeletAddress, podContainer } from './pod.kubelet.js';
import { containerLogUrl, decodePodLogOptions, validatePodLogOptions } from './pod.log.js';

const pod = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec });
const node = (status: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' }, status });

describe('the pods/log options', () => {
  it('decodes the query as kube does: bools by strconv rules, integers strictly, RFC 3339 times', () => {
    expect(decodePodLogOptions({ follow: 'true', previous: '0', timestamps: 'F', tailLines: '10', limitBytes: '5', container: 'c' })).toEqual({
      container: 'c',
      follow: true,
      previous: false,
      timestamps: false,
      insecureSkipTLSVerifyBackend: false,
      tailLines: 10,
      limitBytes: 5,
    });
    expect(decodePodLogOptions({ sinceTime: '2026-01-02T03:04:05Z' }).sinceTime).toBe('2026-01-02T03:04:05Z');
    expect(() => decodePodLogOptions({ tailLines: '1.5' })).toThrow('strconv.ParseInt: parsing "1.5": invalid syntax');
    expect(() => decodePodLogOptions({ sinceSeconds: '99999999999999999999' })).toThrow('value out of range');
    // Any int64 decodes, past JavaScript's exact integers too.
    expect(decodePodLogOptions({ limitBytes: '1152921504606846976' }).limitBytes).toBe(2 ** 60);
    expect(() => decodePodLogOptions({ sinceTime: '2026-01-02' })).toThrow('parsing time "2026-01-02"');
  });

  it("validates them with kube's rules and messages", () => {
    expect(validatePodLogOptions(decodePodLogOptions({ tailLines: '0', limitBytes: '1', sinceSeconds: '1' }))).toEqual([]);
    expect(validatePodLogOptions(decodePodLogOptions({ tailLines: '-1', limitBytes: '0', sinceSeconds: '0' }))).toEqual([
      { type: 'FieldValueInvalid', field: 'tailLines', value: -1, detail: 'must be greater than or equal to 0' },
      { type: 'FieldValueInvalid', field: 'limitBytes', value: 0, detail: 'must be greater than 0' },
      { type: 'FieldValueInvalid', field: 'sinceSeconds', value: 0, detail: 'must be greater than 0' },
    ]);
    expect(validatePodLogOptions(decodePodLogOptions({ sinceSeconds: '0', sinceTime: '2026-01-02T03:04:05Z' }))).toEqual([
      { type: 'FieldValueForbidden', field: '', detail: 'at most one of `sinceTime` or `sinceSeconds` may be specified' },
    ]);
  });
});

describe('the container and the kubelet of a pod', () => {
  it('takes the only container, asks for a name among several, and knows init and ephemeral containers', () => {
    expect(podContainer(pod({ containers: [{ name: 'app' }] }), undefined)).toBe('app');
    expect(() => podContainer(pod({ containers: [] }), undefined)).toThrow('a container name must be specified for pod p');
    const several = pod({ initContainers: [{ name: 'i' }], containers: [{ name: 'a' }, { name: 'b' }], ephemeralContainers: [{ name: 'dbg' }] });
    expect(() => podContainer(several, undefined)).toThrow('a container name must be specified for pod p, choose one of: [i a b dbg]');
    expect(podContainer(several, 'dbg')).toBe('dbg');
    expect(podContainer(several, 'i')).toBe('i');
    expect(() => podContainer(several, 'x')).toThrow('container x is not valid for pod p');
  });

  it("finds the kubelet by kube's preferred address types and its endpoint port, 10250 by default", () => {
    const addresses = [
      { type: 'ExternalIP', address: '203.0.113.9' },
      { type: 'InternalIP', address: '10.0.0.7' },
    ];
    expect(kubeletAddress(node({ addresses, daemonEndpoints: { kubeletEndpoint: { Port: 10999 } } }))).toEqual({ host: '10.0.0.7', port: 10999 });
    expect(kubeletAddress(node({ addresses: [...addresses, { type: 'Hostname', address: 'worker-1' }] }))).toEqual({ host: 'worker-1', port: 10250 });
    expect(() => kubeletAddress(node({ addresses: [] }))).toThrow('no preferred addresses found; known addresses: []');
    // --kubelet-preferred-address-types decides the order.
    expect(kubeletAddress(node({ addresses: [...addresses, { type: 'Hostname', address: 'worker-1' }] }), ['InternalIP', 'Hostname'])).toEqual({
      host: '10.0.0.7',
      port: 10250,
    });
    expect(() => kubeletAddress(node({ addresses: [{ type: 'Hostname', address: 'worker-1' }] }), ['ExternalIP'])).toThrow(
      'no preferred addresses found; known addresses: [{Hostname worker-1}]',
    );
  });

  it('builds the log URL with the options sorted by name, an IPv6 host in brackets', () => {
    const o = decodePodLogOptions({ follow: '1', tailLines: '3', sinceTime: '2026-01-02T03:04:05.123+01:00' });
    expect(containerLogUrl({ host: 'fd00::1', port: 10250 }, 'ns', 'p', 'c', o)).toBe(
      'https://[fd00::1]:10250/containerLogs/ns/p/c?follow=true&sinceTime=2026-01-02T02%3A04%3A05Z&tailLines=3',
    );
  });
});
