/**
 * The long connection's frame format, `pbbp2.Frame`, declared from the schema the SDK was
 * generated from (ws-client/proto-buf/pbbp2) and encoded by protobufjs — the same library the
 * SDK decodes with, so the fake speaks exactly its wire format.
 */
import Long from "long";
import protobuf from "protobufjs";

const SCHEMA = `
syntax = "proto2";
package pbbp2;
message Header {
  required string key = 1;
  required string value = 2;
}
message Frame {
  required uint64 SeqID = 1;
  required uint64 LogID = 2;
  required int32 service = 3;
  required int32 method = 4;
  repeated Header headers = 5;
  optional string payloadEncoding = 6;
  optional string payloadType = 7;
  optional bytes payload = 8;
  optional string LogIDNew = 9;
}
`;

const FrameType = resolveFrameType();

/**
 * The SDK switches 64-bit support off in the protobufjs instance it shares with us
 * (`util.Long = undefined`), and resolving a uint64 field needs it. Resolve with Long present,
 * then put back whatever the SDK chose, so its own decoding is unchanged.
 */
function resolveFrameType(): protobuf.Type {
  const saved = protobuf.util.Long;
  protobuf.util.Long = saved ?? Long;
  try {
    const type = protobuf.parse(SCHEMA).root.lookupType("pbbp2.Frame");
    type.root.resolveAll();
    type.setup();
    return type;
  } finally {
    protobuf.util.Long = saved;
  }
}

/** Frame methods. */
export const CONTROL = 0;
export const DATA = 1;

export interface Frame {
  SeqID: number;
  LogID: number;
  service: number;
  method: number;
  headers: Array<{ key: string; value: string }>;
  payload?: Uint8Array;
}

export function encodeFrame(frame: Frame): Uint8Array {
  const message = FrameType.fromObject(frame);
  const problem = FrameType.verify(message);
  if (problem) throw new Error(`bad frame: ${problem}`);
  return FrameType.encode(message).finish();
}

export function decodeFrame(data: Uint8Array): Frame {
  const decoded = FrameType.toObject(FrameType.decode(data), { longs: Number, bytes: Buffer, defaults: true, arrays: true });
  return decoded as Frame;
}

export function header(frame: Frame, key: string): string | undefined {
  return frame.headers.find((h) => h.key === key)?.value;
}
