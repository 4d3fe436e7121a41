// Playing one seat of a Hearts table over the table service's gRPC API, from that seat's view
// alone: create the table, sit down, start it with computer players in the other seats, then
// answer each turn WatchTurns sends with a random legal action until the game is over.

import { randomBytes, randomInt } from "node:crypto";
import type { Client, Metadata } from "@grpc/grpc-js";
import type { SeatView } from "./gen/cardtable/common/v1/views_pb.js";
import { TableService } from "./gen/cardtable/table/v1/table_pb.js";
import { serverStream, unary, withRetryAfter } from "./grpc.js";

/** What the client did and saw: its table and seat, its moves, and its last view. */
export interface PlayedGame {
  tableId: string;
  seat: number;
  moves: string[];
  finalView: SeatView;
}

function commandId(): string {
  return `ts-${randomBytes(8).toString("hex")}`;
}

/**
 * A random legal action from the seat's own view, or undefined when it has nothing to do now.
 * The view lists them (`legal_actions`), or says "any `count` of these cards" (`choose_cards`,
 * Hearts' pass), so the client needs no rule of the game to play it (docs/views.md).
 */
export function randomLegalAction(view: SeatView): string | undefined {
  const choice = view.chooseCards;
  if (choice !== undefined && choice.count > 0) {
    const cards = [...choice.cards];
    for (let index = cards.length - 1; index > 0; index -= 1) {
      const other = randomInt(index + 1);
      [cards[index], cards[other]] = [cards[other], cards[index]];
    }
    return [choice.verb, ...cards.slice(0, choice.count)].join(" ");
  }
  if (view.legalActions.length > 0) {
    return view.legalActions[randomInt(view.legalActions.length)].action;
  }
  return undefined;
}

/** Creates a Hearts table, takes a seat, and plays it to the end. */
export async function playHearts(
  tables: Client,
  metadata: Metadata,
  options: Record<string, string>,
): Promise<PlayedGame> {
  const created = await unary(
    tables,
    TableService.method.createTable,
    {
      commandId: commandId(),
      game: "hearts",
      seats: 4,
      options: { values: options },
      // Computer players take the empty seats when this client starts the game; the long
      // fill wait only keeps them from taking them all before it has sat down.
      settings: { fillWithBots: true, fillWaitMs: 120_000 },
    },
    metadata,
  );
  const tableId = created.tableId;
  const joined = await unary(
    tables,
    TableService.method.joinTable,
    { commandId: commandId(), tableId },
    metadata,
  );
  const seat = joined.seat;
  await unary(tables, TableService.method.startGame, { commandId: commandId(), tableId }, metadata);

  const moves: string[] = [];
  // While every seat chooses its pass at once, the others' passes are new versions at which
  // this seat is still to act: a turn older than this client's own last move is stale.
  let movedAt = 0n;
  const turns = serverStream(
    tables,
    TableService.method.watchTurns,
    { tableId, seat, afterVersion: 0n },
    metadata,
  );
  for await (const turn of turns) {
    const view = turn.seatView;
    if (view === undefined) {
      throw new Error(`WatchTurns at version ${turn.version} carried no seat view`);
    }
    if (view.seat !== seat || view.game !== "hearts") {
      throw new Error(`a view for seat ${view.seat} of ${view.game}, not seat ${seat} of hearts`);
    }
    if (view.over) {
      return { tableId, seat, moves, finalView: view };
    }
    if (turn.version < movedAt) {
      continue;
    }
    const action = randomLegalAction(view);
    if (action === undefined) {
      continue;
    }
    // Fast computer players can bring the turns quicker than a person's rate limit allows.
    const move = { commandId: commandId(), tableId, seat, action, expectedVersion: 0n };
    const moved = await withRetryAfter(() =>
      unary(tables, TableService.method.makeMove, move, metadata),
    );
    moves.push(action);
    movedAt = moved.version;
  }
  throw new Error("WatchTurns ended before the game was over");
}
