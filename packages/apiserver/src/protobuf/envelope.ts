import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { ProtobufError, decodeMessage, writeMessage } from './codec.ts';
import { messageOfKind, messageSchema } from './schema.ts';

/** The media type of Kubernetes protobuf, and of its watch streams. */
export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
export const PROTOBUF_WATCH = `${PROTOBUF};stream=watch`;

/** `k8s\0`: every protobuf object body starts with it, then a `runtime.Unknown`. */
const MAGIC = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

type Json = Record<string, unknown>;

/** True when an object of this apiVersion and kind has a protobuf form (built-in kinds; not custom resources, Table). */
export function hasProtobuf(apiVersion: string, kind: string): boolean {
  return messageOfKind(apiVersion, kind) !== undefined;
}

/**
 * An object (with `apiVersion` and `kind`) as a protobuf body: the magic, then `runtime.Unknown{typeMeta, raw}` whose
 * raw is the object's message, as the real server's protobuf serializer writes it.
 */
export function encodeObject(obj: Json): Uint8Array {
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  const name = messageOfKind(apiVersion, kind);
  if (!name) throw new ProtobufError(`no protobuf form for ${apiVersion}, Kind=${kind}`);
  const writer = new BinaryWriter();
  writer.raw(MAGIC);
  writer.tag(1, WireType.LengthDelimited).fork();
  writer.tag(1, WireType.LengthDelimited).string(apiVersion);
  writer.tag(2, WireType.LengthDelimited).string(kind);
  writer.join();
  writer.tag(2, WireType.LengthDelimited).fork();
  writeMessage(writer, obj, messageSchema(name)!);
  writer.join();
  writer.tag(3, WireType.LengthDelimited).string('');
  writer.tag(4, WireType.LengthDelimited).string('');
  return writer.finish();
}

/** The envelope of a protobuf body: its type and the raw message. */
export function readEnvelope(body: Uint8Array): { apiVersion: string; kind: string; raw: Uint8Array } {
  if (body.length < MAGIC.length || MAGIC.some((b, i) => body[i] !== b))
    throw new ProtobufError(
      `provided data does not appear to be a protobuf message, expected prefix ${JSON.stringify([...MAGIC])}`,
    );
  const unknown = decodeMessage(body.subarray(MAGIC.length), 'runtime.Unknown');
  const typeMeta = (unknown.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  if (typeof unknown.contentEncoding === 'string' && unknown.contentEncoding !== '')
    throw new ProtobufError(`unsupported content encoding ${unknown.contentEncoding}`);
  return {
    apiVersion: typeMeta.apiVersion ?? '',
    kind: typeMeta.kind ?? '',
    raw: Buffer.from((unknown.raw as string | undefined) ?? '', 'base64'),
  };
}

/**
 * A protobuf request body as its JSON form, with `apiVersion` and `kind` from the envelope. `expected` is the kind the
 * endpoint takes when the envelope names none.
 */
export function decodeObject(body: Uint8Array, expected?: { apiVersion: string; kind: string }): Json {
  const envelope = readEnvelope(body);
  const apiVersion = envelope.apiVersion || expected?.apiVersion || '';
  const kind = envelope.kind || expected?.kind || '';
  const name = messageOfKind(apiVersion, kind);
  if (!name) throw new ProtobufError(`no kind "${kind}" is registered for version "${apiVersion}"`);
  return { apiVersion, kind, ...decodeMessage(envelope.raw, name) };
}

/**
 * One frame of a protobuf watch stream: a 4-byte big-endian length, then `WatchEvent{type, object: {raw}}` (without
 * magic) whose raw is the object encoded as by {@link encodeObject}.
 */
export function encodeWatchFrame(type: string, object: Json): Uint8Array {
  const writer = new BinaryWriter();
  writer.tag(1, WireType.LengthDelimited).string(type);
  writer.tag(2, WireType.LengthDelimited).fork();
  writer.tag(1, WireType.LengthDelimited).bytes(encodeObject(object));
  writer.join();
  const event = writer.finish();
  const frame = new Uint8Array(4 + event.length);
  new DataView(frame.buffer).setUint32(0, event.length);
  frame.set(event, 4);
  return frame;
}

/** Splits a protobuf watch stream into its events (for tests and clients of this server). */
export function decodeWatchFrames(stream: Uint8Array): Array<{ type: string; object: Json }> {
  const out: Array<{ type: string; object: Json }> = [];
  let pos = 0;
  while (pos + 4 <= stream.length) {
    const length = new DataView(stream.buffer, stream.byteOffset + pos).getUint32(0);
    const reader = new BinaryReader(stream.subarray(pos + 4, pos + 4 + length));
    let type = '';
    let raw: Uint8Array = new Uint8Array(0);
    while (reader.pos < reader.len) {
      const [no, wt] = reader.tag();
      if (no === 1) type = reader.string();
      else if (no === 2) {
        const inner = new BinaryReader(reader.bytes());
        while (inner.pos < inner.len) {
          const [n, w] = inner.tag();
          if (n === 1) raw = inner.bytes();
          else inner.skip(w);
        }
      } else reader.skip(wt);
    }
    out.push({ type, object: decodeObject(raw) });
    pos += 4 + length;
  }
  return out;
}
