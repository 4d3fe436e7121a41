// A table's event log, read from NATS JetStream with the operator's read-only credentials.
//
// Each message on the table's subject `{prefix}.table.{table_id}` of stream `{name}_EVENTS` is
// one EventBatch (docs/events.md). The operator may only get messages and read its own inbox
// (`_INBOX_{name}_operator`, docs/security.md), so the batches are read one by one with the
// stream's direct get ("the next message on this subject after sequence N"), from the
// subject's first to its last.

import { createHash } from "node:crypto";
import { connect, type ConnectionOptions, type JetStreamManager, type StoredMsg } from "nats";
import { fromBinary } from "@bufbuild/protobuf";
import { EventBatchSchema, type EventBatch } from "./gen/cardtable/events/v1/events_pb.js";

/**
 * nats.js 2.29 serves "the next message on a subject" by the stream's direct get only, which its
 * JetStreamManager has (`direct`) but its interface does not declare; the events stream allows
 * direct gets (`allow_direct`), and the operator may make them.
 */
type WithDirectGet = JetStreamManager & {
  direct: {
    getMessage(stream: string, query: { seq: number; next_by_subj: string }): Promise<StoredMsg>;
  };
};

export interface LogSettings {
  natsUrl: string;
  user: string;
  password: string;
  prefix: string;
}

/** The stream and bucket names' form of the prefix (as `LogNames` makes it). */
function streamName(prefix: string): string {
  return prefix.replace(/[.-]/g, "_");
}

/** The table's batches in log order, checked to form one unbroken chain. */
export async function readTableLog(settings: LogSettings, tableId: string): Promise<EventBatch[]> {
  const name = streamName(settings.prefix);
  const options: ConnectionOptions = {
    servers: settings.natsUrl,
    user: settings.user,
    pass: settings.password,
    inboxPrefix: `_INBOX_${name}_operator`,
    name: "cardtable-typescript-example",
  };
  const connection = await connect(options);
  try {
    // No account-info request first: the operator may not make it.
    const manager = (await connection.jetstreamManager({ checkAPI: false })) as WithDirectGet;
    const stream = `${name}_EVENTS`;
    const subject = `${settings.prefix}.table.${tableId}`;
    const last = await manager.streams.getMessage(stream, { last_by_subj: subject });
    const batches: EventBatch[] = [];
    let previous: Uint8Array | undefined;
    let sequence = 0;
    while (sequence < last.seq) {
      const message = await manager.direct.getMessage(stream, {
        seq: sequence + 1,
        next_by_subj: subject,
      });
      const batch = fromBinary(EventBatchSchema, message.data);
      checkChain(batch, previous, batches.length + 1);
      batches.push(batch);
      previous = message.data;
      sequence = message.seq;
    }
    return batches;
  } finally {
    await connection.close();
  }
}

/** Each batch names the SHA-256 of the one before it and counts the table's versions. */
function checkChain(batch: EventBatch, previous: Uint8Array | undefined, version: number): void {
  const expected = previous === undefined ? "" : createHash("sha256").update(previous).digest("hex");
  const named = Buffer.from(batch.previousBatchSha256).toString("hex");
  if (named !== expected || batch.tableVersion !== BigInt(version)) {
    throw new Error(`batch ${version} of the log does not follow the one before it`);
  }
}
