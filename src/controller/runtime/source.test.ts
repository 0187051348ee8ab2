import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { silentLogger } from '../../core/index.ts';
import { EventChannel, keysSource } from './source.ts';

/** What a controller would queue: each batch as delivered. */
function collect(): { batches: string[][]; enqueue: (keys: Iterable<string>) => void } {
  const batches: string[][] = [];
  return { batches, enqueue: (keys) => void batches.push([...keys]) };
}

describe('EventChannel', () => {
  it('keeps what is sent before anyone listens and delivers it to the first listener, oldest dropped past the buffer', () => {
    const channel = new EventChannel<{ key: string }>('test', { bufferSize: 2 });
    channel.send({ key: 'a' });
    channel.send({ key: 'b' });
    channel.send({ key: 'c' });
    const first = collect();
    channel.source((e) => [e.key]).start(first.enqueue, silentLogger);
    assert.deepEqual(first.batches, [['b'], ['c']]);
    // Delivered once: a second listener does not get them again.
    const second = collect();
    channel.source((e) => [e.key]).start(second.enqueue, silentLogger);
    assert.deepEqual(second.batches, []);
  });

  it('delivers each event to every listener, mapped by its own function, until it stops listening', () => {
    const channel = new EventChannel<{ namespace: string }>('test');
    const pods = collect();
    const services = collect();
    const stopPods = channel
      .source((e) => [`${e.namespace}/p1`, `${e.namespace}/p2`])
      .start(pods.enqueue, silentLogger);
    channel.source((e) => [`${e.namespace}/svc`]).start(services.enqueue, silentLogger);
    channel.send({ namespace: 'shop' });
    stopPods();
    channel.send({ namespace: 'team' });
    assert.deepEqual(pods.batches, [['shop/p1', 'shop/p2']]);
    assert.deepEqual(services.batches, [['shop/svc'], ['team/svc']]);
  });

  it('a map function that throws loses that event only', () => {
    const channel = new EventChannel<string>('test');
    const got = collect();
    channel
      .source((e) => {
        if (e === 'bad') throw new Error('boom');
        return [e];
      })
      .start(got.enqueue, silentLogger);
    channel.send('bad');
    channel.send('good');
    assert.deepEqual(got.batches, [['good']]);
  });
});

describe('keysSource', () => {
  it('queues its keys once, when started', () => {
    const got = collect();
    const stop = keysSource('nodes', ['node-1', 'node-2']).start(got.enqueue, silentLogger);
    stop();
    assert.deepEqual(got.batches, [['node-1', 'node-2']]);
  });
});
