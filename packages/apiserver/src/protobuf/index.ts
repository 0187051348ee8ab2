/**
 * protobuf: Kubernetes' protobuf encoding of the built-in kinds, both directions, as JSON objects in and out — the
 * `k8s\0` + `runtime.Unknown` envelope of bodies, length-delimited `WatchEvent` frames of watch streams, and the
 * message tables (field numbers of the API's wire contract) in `schema/`. Custom resources and Table have no
 * protobuf form ({@link hasProtobuf}).
 */
export { ProtobufError, encodeMessage, decodeMessage } from './codec.ts';
export { checkFields, type FieldCheck } from './fields.ts';
export {
  PROTOBUF,
  PROTOBUF_WATCH,
  hasProtobuf,
  encodeObject,
  decodeObject,
  readEnvelope,
  encodeWatchFrame,
  decodeWatchFrames,
} from './envelope.ts';
export {
  messageSchema,
  messageOfKind,
  messageTokens,
  allMessages,
  type FieldSpec,
  type MessageSchema,
} from './schema.ts';
