// A cardtable client in TypeScript, as proof that the contracts serve a second language:
//
// 1. plays one seat of a Hearts table over the table service's gRPC API, computer players in
//    the other seats, from its seat's view alone;
// 2. reads the table's events from NATS JetStream with the operator's read credentials and
//    recomputes the scores from the public typed facts;
// 3. checks them against the log's own DealScored and GameFinished and against the scoring
//    service's GetGameResult, and prints the verdict; the exit status is 0 only if all agree.
//
// Settings come from the environment `source .run/env` sets (README, "The two commands").
// `--quick` plays Hearts' one-deal variant (an unrated game) instead of a game to 100.

import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "@grpc/grpc-js";
import { ScoringService, type GetGameResultResponse } from "./gen/cardtable/scoring/v1/scoring_pb.js";
import { readTableLog } from "./events.js";
import { bearer, connect, unary } from "./grpc.js";
import { compareWith, recount } from "./hearts.js";
import { playHearts } from "./play.js";
import { personToken } from "./token.js";

const REQUIRED = ["TABLE_ADDRESS", "SCORING_ADDRESS", "TOKEN_SIGNING_KEY", "NATS_URL", "NATS_USER"];

/** The settings, failing at once with every missing one named. */
function settings(): Record<string, string> {
  const environment = process.env;
  const missing = REQUIRED.filter((name) => !environment[name]);
  if (!environment.NATS_PASSWORD && !environment.NATS_PASSWORD_FILE) {
    missing.push("NATS_PASSWORD");
  }
  if (missing.length > 0) {
    throw new Error(`missing ${missing.join(", ")}: run \`source .run/env\` first`);
  }
  const password =
    environment.NATS_PASSWORD ?? readFileSync(environment.NATS_PASSWORD_FILE ?? "", "utf8").trim();
  return {
    ...(environment as Record<string, string>),
    NATS_PASSWORD: password,
    EVENT_PREFIX: environment.EVENT_PREFIX || "cardtable",
  };
}

/** The scoring service's result once its projection has read the end of the game. */
async function finishedResult(scoring: Client, tableId: string): Promise<GetGameResultResponse> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const result = await unary(scoring, ScoringService.method.getGameResult, { tableId });
      if (result.finished) {
        return result;
      }
    } catch (error) {
      // NOT_FOUND (5) until the projection has read the table's first events.
      if ((error as { code?: number }).code !== 5) {
        throw error;
      }
    }
    if (Date.now() > deadline) {
      throw new Error(`the scoring service had not finished ${tableId} after 60 s`);
    }
    await sleep(250);
  }
}

/** The cards the client's seat played, as the log's TrickWon facts show them. */
function cardsPlayedBy(seat: number, batches: Awaited<ReturnType<typeof readTableLog>>): string[] {
  const cards: string[] = [];
  for (const batch of batches) {
    for (const event of batch.events) {
      if (event.body.case === "factRecorded" && event.body.value.body.case === "trickWon") {
        const trick = event.body.value.body.value;
        cards.push(...trick.cards.filter((_, index) => (trick.leader + index) % 4 === seat));
      }
    }
  }
  return cards.sort();
}

async function main(): Promise<number> {
  const env = settings();
  const quick = process.argv.includes("--quick");
  const player = `ts-example-${randomBytes(4).toString("hex")}`;
  const tables = connect(env.TABLE_ADDRESS);
  const scoring = connect(env.SCORING_ADDRESS);
  try {
    const started = Date.now();
    const game = await playHearts(
      tables,
      bearer(personToken(env.TOKEN_SIGNING_KEY, player)),
      quick ? { quick: "true" } : {},
    );
    const view = game.finalView;
    console.log(
      `played seat ${game.seat} of hearts table ${game.tableId} as ${player}: ${game.moves.length} ` +
        `moves, ${view.dealNumber} deals, ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
        `the table says totals ${view.totals} places ${view.places}`,
    );

    const batches = await readTableLog(
      { natsUrl: env.NATS_URL, user: env.NATS_USER, password: env.NATS_PASSWORD, prefix: env.EVENT_PREFIX },
      game.tableId,
    );
    const result = recount(batches);
    console.log(
      `read ${batches.length} batches from JetStream (${result.sealedEvents} sealed events skipped); ` +
        `recomputed deals ${result.deals.map((deal) => `[${deal.recomputed}]`).join(" ")}`,
    );
    console.log(`recomputed totals ${result.totals} places ${result.places}`);

    const answer = await finishedResult(scoring, game.tableId);
    console.log(`scoring service: totals ${answer.totals} places ${answer.places} rated ${answer.rated}`);
    const differences = [
      ...result.disagreements,
      ...compareWith("the scoring service", result, {
        totals: answer.totals.map(Number),
        places: answer.places,
        deals: answer.deals.map((deal) => ({ dealNumber: deal.dealNumber, scores: deal.scores.map(Number) })),
      }),
      ...compareWith("the seat's final view", result, {
        totals: view.totals.map(Number),
        places: view.places,
        deals: view.dealScores.map((deal, index) => ({ dealNumber: index + 1, scores: deal.scores.map(Number) })),
      }),
    ];
    const played = game.moves.filter((move) => move.startsWith("play ")).map((move) => move.slice(5)).sort();
    if (played.join(" ") !== cardsPlayedBy(game.seat, batches).join(" ")) {
      differences.push(`the log's tricks do not hold the cards seat ${game.seat} played`);
    }
    for (const difference of differences) {
      console.log(`  differs: ${difference}`);
    }
    if (differences.length > 0) {
      console.log(`verdict: scores differ (${differences.length} differences)`);
      return 1;
    }
    console.log(
      `verdict: scores equal: recomputed from ${result.deals.length} deals' facts, ` +
        "the log's DealScored and GameFinished, and the scoring service agree",
    );
    return 0;
  } finally {
    tables.close();
    scoring.close();
  }
}

main().then(
  (status) => {
    process.exitCode = status;
  },
  (error: unknown) => {
    console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 2;
  },
);
