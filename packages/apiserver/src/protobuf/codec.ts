import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { messageSchema, type FieldSpec, type MessageSchema, type ScalarType } from './schema.ts';
import { formatDuration, formatMicroTime, formatTime, parseDuration, parseTimestamp } from './time.ts';

/** A body that cannot be encoded or decoded as the message it should be: the request's fault (400). */
export class ProtobufError extends Error {}

type Json = Record<string, unknown>;

function schemaOf(name: string): MessageSchema {
  const schema = messageSchema(name);
  if (!schema) throw new ProtobufError(`no protobuf message ${name}`);
  return schema;
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** Writes one message's fields from its JSON form; keys the message has no field for are not encoded. */
export function writeMessage(writer: BinaryWriter, value: Json, schema: MessageSchema): void {
  for (const field of schema.fields) {
    if (field.inline) {
      // The embedded struct's fields are this object's own keys.
      writer.tag(field.number, WireType.LengthDelimited).fork();
      writeMessage(writer, value, schemaOf(field.message!));
      writer.join();
      continue;
    }
    const v = value[field.name];
    if (v === undefined) continue;
    if (field.map) {
      if (v === null || typeof v !== 'object') continue;
      for (const key of Object.keys(v).sort()) {
        writer.tag(field.number, WireType.LengthDelimited).fork();
        writer.tag(1, WireType.LengthDelimited).string(key);
        writeValue(writer, 2, field.map.type, field.map.message, (v as Json)[key]);
        writer.join();
      }
    } else if (field.repeated) {
      if (Array.isArray(v))
        for (const item of v as unknown[]) writeValue(writer, field.number, field.type, field.message, item);
    } else {
      writeValue(writer, field.number, field.type, field.message, v);
    }
  }
}

function writeTimestamp(writer: BinaryWriter, value: unknown): void {
  if (value === null) return;
  const ts = typeof value === 'string' ? parseTimestamp(value) : undefined;
  if (!ts) throw new ProtobufError(`not a timestamp: ${JSON.stringify(value)}`);
  writer.tag(1, WireType.Varint).int64(ts.seconds);
  writer.tag(2, WireType.Varint).int32(ts.nanos);
}

function writeValue(
  writer: BinaryWriter,
  no: number,
  type: ScalarType | 'message',
  message: string | undefined,
  v: unknown,
): void {
  switch (type) {
    case 'string':
      if (v !== null) writer.tag(no, WireType.LengthDelimited).string(typeof v === 'string' ? v : JSON.stringify(v));
      return;
    case 'i32':
      if (typeof v === 'number') writer.tag(no, WireType.Varint).int32(v);
      return;
    case 'i64':
      if (typeof v === 'number') writer.tag(no, WireType.Varint).int64(v);
      return;
    case 'bool':
      if (typeof v === 'boolean') writer.tag(no, WireType.Varint).bool(v);
      return;
    case 'f64':
      if (typeof v === 'number') writer.tag(no, WireType.Bit64).double(v);
      return;
    case 'bytes':
      if (typeof v === 'string') writer.tag(no, WireType.LengthDelimited).bytes(Buffer.from(v, 'base64'));
      return;
    case 'message':
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return;
      writer.tag(no, WireType.LengthDelimited).fork();
      writeMessage(writer, v as Json, schemaOf(message!));
      writer.join();
      return;
  }
  // The rest are messages with a JSON form of their own.
  writer.tag(no, WireType.LengthDelimited).fork();
  switch (type) {
    case 'time':
    case 'microtime':
      writeTimestamp(writer, v);
      break;
    case 'duration': {
      const nanos = typeof v === 'string' ? parseDuration(v) : undefined;
      if (nanos === undefined) throw new ProtobufError(`not a duration: ${JSON.stringify(v)}`);
      writer.tag(1, WireType.Varint).int64(nanos);
      break;
    }
    case 'quantity':
      writer.tag(1, WireType.LengthDelimited).string(String(v));
      break;
    case 'json':
      writer.tag(1, WireType.LengthDelimited).bytes(utf8.encode(JSON.stringify(v)));
      break;
    case 'intstr':
      if (typeof v === 'number') {
        writer.tag(1, WireType.Varint).int64(0);
        writer.tag(2, WireType.Varint).int32(v);
      } else {
        writer.tag(1, WireType.Varint).int64(1);
        writer.tag(3, WireType.LengthDelimited).string(String(v));
      }
      break;
    case 'strings':
      for (const s of Array.isArray(v) ? (v as unknown[]) : [])
        writer.tag(1, WireType.LengthDelimited).string(String(s));
      break;
  }
  writer.join();
}

/** JSON of one message by name. */
export function encodeMessage(value: Json, name: string): Uint8Array {
  const writer = new BinaryWriter();
  writeMessage(writer, value, schemaOf(name));
  return writer.finish();
}

/** The JSON form of one message's bytes. */
export function decodeMessage(bytes: Uint8Array, name: string): Json {
  return readMessage(new BinaryReader(bytes), schemaOf(name), bytes.length);
}

const isZero = (v: unknown): boolean => v === '' || v === 0 || v === false;
const plainScalars = new Set<FieldSpec['type']>(['string', 'i32', 'i64', 'bool', 'f64', 'bytes']);

function readMessage(reader: BinaryReader, schema: MessageSchema, end: number): Json {
  const out: Json = {};
  while (reader.pos < end) {
    const [no, wireType] = reader.tag();
    const field = schema.byNumber.get(no);
    if (!field) {
      // A field this table does not know (a newer API): skipped, as Go's unmarshalling does.
      reader.skip(wireType);
      continue;
    }
    if (field.map) {
      const entryEnd = reader.uint32() + reader.pos;
      let key = '';
      let value: unknown;
      while (reader.pos < entryEnd) {
        const [n, wt] = reader.tag();
        if (n === 1) key = reader.string();
        else if (n === 2) value = readValue(reader, field.map.type, field.map.message, wt);
        else reader.skip(wt);
      }
      ((out[field.name] ??= {}) as Json)[key] = value ?? emptyOf(field.map.type);
    } else if (field.repeated) {
      const list = (out[field.name] ??= []) as unknown[];
      if (wireType === WireType.LengthDelimited && isNumeric(field.type)) {
        const packedEnd = reader.uint32() + reader.pos;
        while (reader.pos < packedEnd) list.push(readValue(reader, field.type, undefined, WireType.Varint));
      } else {
        list.push(readValue(reader, field.type, field.message, wireType));
      }
    } else if (field.inline) {
      Object.assign(out, readValue(reader, field.type, field.message, wireType));
    } else {
      const value = readValue(reader, field.type, field.message, wireType);
      // Only plain scalars are Go value fields that omitempty drops; messages (maxSurge: 0 too) are kept as sent.
      if (field.pointer || !plainScalars.has(field.type) || !isZero(value)) out[field.name] = value;
      else delete out[field.name];
    }
  }
  return out;
}

const isNumeric = (type: FieldSpec['type']): boolean =>
  type === 'i32' || type === 'i64' || type === 'bool' || type === 'f64';

function emptyOf(type: FieldSpec['type']): unknown {
  return type === 'string' || type === 'quantity' || type === 'bytes' ? '' : type === 'message' ? {} : null;
}

function readTimestamp(reader: BinaryReader, end: number): { seconds: number; nanos: number } | undefined {
  let seconds = 0;
  let nanos = 0;
  let any = false;
  while (reader.pos < end) {
    const [n, wt] = reader.tag();
    any = true;
    if (n === 1) seconds = Number(reader.int64());
    else if (n === 2) nanos = reader.int32();
    else reader.skip(wt);
  }
  // Go's Time unmarshals an empty message, and {0, 0}, as the zero time.
  return any && (seconds !== 0 || nanos !== 0) ? { seconds, nanos } : undefined;
}

function readValue(
  reader: BinaryReader,
  type: FieldSpec['type'],
  message: string | undefined,
  wireType: WireType,
): unknown {
  switch (type) {
    case 'string':
      return reader.string();
    case 'i32':
      return reader.int32();
    case 'i64':
      return Number(reader.int64());
    case 'bool':
      return reader.bool();
    case 'f64':
      return wireType === WireType.Bit64 ? reader.double() : Number(reader.int64());
    case 'bytes':
      return Buffer.from(reader.bytes()).toString('base64');
    case 'message':
      return readMessage(reader, schemaOf(message!), reader.uint32() + reader.pos);
  }
  const end = reader.uint32() + reader.pos;
  switch (type) {
    case 'time':
    case 'microtime': {
      const ts = readTimestamp(reader, end);
      if (!ts) return null;
      return type === 'time' ? formatTime(ts.seconds) : formatMicroTime(ts.seconds, ts.nanos);
    }
    case 'json': {
      let raw: Uint8Array = new Uint8Array(0);
      while (reader.pos < end) {
        const [n, wt] = reader.tag();
        if (n === 1) raw = reader.bytes();
        else reader.skip(wt);
      }
      if (raw.length === 0) return null;
      try {
        return JSON.parse(fromUtf8.decode(raw)) as unknown;
      } catch {
        throw new ProtobufError('embedded JSON is not valid');
      }
    }
    case 'duration': {
      let nanos = 0;
      while (reader.pos < end) {
        const [n, wt] = reader.tag();
        if (n === 1) nanos = Number(reader.int64());
        else reader.skip(wt);
      }
      return formatDuration(nanos);
    }
    case 'quantity':
    case 'strings': {
      const items: string[] = [];
      while (reader.pos < end) {
        const [n, wt] = reader.tag();
        if (n === 1) items.push(reader.string());
        else reader.skip(wt);
      }
      return type === 'strings' ? items : (items.at(-1) ?? '');
    }
    case 'intstr': {
      let kind = 0;
      let int = 0;
      let str = '';
      while (reader.pos < end) {
        const [n, wt] = reader.tag();
        if (n === 1) kind = Number(reader.int64());
        else if (n === 2) int = reader.int32();
        else if (n === 3) str = reader.string();
        else reader.skip(wt);
      }
      return kind === 1 ? str : int;
    }
  }
}
