import { decodePorts, decodeStreamOptions, streamParams } from './pod.connect.js';

describe('pod connect options', () => {
  it('decodes exec options with every command word in order, and attach options without a command', () => {
    const q = { command: ['sh', '-c', 'echo a && echo b'], stdin: ['true'], stdout: ['1'], stderr: ['false'], tty: ['t'], container: ['app'] };
    const exec = decodeStreamOptions(q, true);
    expect(exec).toEqual({ container: 'app', stdin: true, stdout: true, stderr: false, tty: true, command: ['sh', '-c', 'echo a && echo b'] });
    expect(streamParams(exec)).toBe('command=sh&command=-c&command=echo+a+%26%26+echo+b&stdin=1&stdout=1&tty=1');
    const attach = decodeStreamOptions(q, false);
    expect(attach.command).toEqual([]);
    expect(streamParams({ ...attach, stderr: true })).toBe('stderr=1&stdin=1&stdout=1&tty=1');
    expect(streamParams(decodeStreamOptions({}, true))).toBe('');
  });

  it('decodes port-forward ports as int32, refusing what Go would not parse', () => {
    expect(decodePorts({ ports: ['8080', '+53'] })).toEqual([8080, 53]);
    expect(decodePorts({})).toEqual([]);
    expect(() => decodePorts({ ports: ['http'] })).toThrow('strconv.ParseInt: parsing "http": invalid syntax');
    expect(() => decodePorts({ ports: ['2147483648'] })).toThrow('strconv.ParseInt: parsing "2147483648": value out of range');
  });
});
