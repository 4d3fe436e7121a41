// gRPC calls over @grpc/grpc-js, typed by the method descriptors protoc-gen-es generates.
//
// protobuf-es generates messages and service descriptors but no grpc-js client, so each call
// here takes the method's descriptor (`TableService.method.makeMove`) and serializes with it:
// the request and the reply keep the generated types, and no `any` reaches the caller.

import { Client, Metadata, credentials, status, type ServiceError } from "@grpc/grpc-js";
import {
  create,
  fromBinary,
  toBinary,
  type DescMessage,
  type DescMethodServerStreaming,
  type DescMethodUnary,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";

/** A plaintext channel to one service, as `make run`'s stack serves them on loopback. */
export function connect(address: string): Client {
  return new Client(address, credentials.createInsecure());
}

/** `authorization: Bearer <token>` metadata, or none for a call that needs no token. */
export function bearer(token?: string): Metadata {
  const metadata = new Metadata();
  if (token) {
    metadata.set("authorization", `Bearer ${token}`);
  }
  return metadata;
}

function path(method: { parent: { typeName: string }; name: string }): string {
  return `/${method.parent.typeName}/${method.name}`;
}

/** One unary call; rejects with the grpc-js ServiceError (its `code` and `details`). */
export function unary<I extends DescMessage, O extends DescMessage>(
  client: Client,
  method: DescMethodUnary<I, O>,
  request: MessageInitShape<I>,
  metadata: Metadata = new Metadata(),
): Promise<MessageShape<O>> {
  const message = create(method.input, request);
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      path(method),
      (value: MessageShape<I>) => Buffer.from(toBinary(method.input, value)),
      (bytes: Buffer) => fromBinary(method.output, bytes),
      message,
      metadata,
      { deadline: Date.now() + 30_000 },
      (error: ServiceError | null, reply?: MessageShape<O>) => {
        if (error || reply === undefined) {
          reject(error ?? new Error(`${method.name}: no reply`));
        } else {
          resolve(reply);
        }
      },
    );
  });
}

/**
 * `call`, sent again after the wait a RESOURCE_EXHAUSTED refusal names in its trailing
 * `retry-after-ms` (the per-player rate limit); any other error rejects as it comes. Send
 * the same command id again, so that a command applied before its reply was lost counts once.
 */
export async function withRetryAfter<T>(call: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await call();
    } catch (error) {
      const refused = error as Partial<ServiceError>;
      if (refused.code !== status.RESOURCE_EXHAUSTED) {
        throw error;
      }
      const wait = Number(refused.metadata?.get("retry-after-ms")[0] ?? 1000);
      await new Promise((resolve) => setTimeout(resolve, Number.isFinite(wait) ? wait : 1000));
    }
  }
}

/** A server-streaming call, read with `for await`. */
export function serverStream<I extends DescMessage, O extends DescMessage>(
  client: Client,
  method: DescMethodServerStreaming<I, O>,
  request: MessageInitShape<I>,
  metadata: Metadata = new Metadata(),
): AsyncIterable<MessageShape<O>> {
  return client.makeServerStreamRequest(
    path(method),
    (value: MessageShape<I>) => Buffer.from(toBinary(method.input, value)),
    (bytes: Buffer) => fromBinary(method.output, bytes),
    create(method.input, request),
    metadata,
  );
}
