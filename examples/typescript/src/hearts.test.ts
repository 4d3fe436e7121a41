// The recount's own scenarios (node's test runner, `npm test`): the rules it applies, and that
// a log whose recorded scores differ from the facts is reported, never passed.

import assert from "node:assert/strict";
import { test } from "node:test";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  EventBatchSchema,
  EventSchema,
  FactRecordedSchema,
  type EventBatch,
} from "./gen/cardtable/events/v1/events_pb.js";
import { dealScores, places, recount } from "./hearts.js";

type EventInit = MessageInitShape<typeof EventSchema>;

const fact = (body: MessageInitShape<typeof FactRecordedSchema>["body"]): EventInit => ({
  body: { case: "factRecorded", value: { body } },
});

/** One deal's public events: seat 2 takes the QS, seat 1 twelve hearts (no rule of play is
 * checked here, so the 2H may stay unplayed), and the scores the log records for it. */
function deal(recordedScores: number[], recordedTotals: number[]): EventBatch[] {
  const hearts = ["2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "10H", "JH", "QH", "KH", "AH"];
  const events: EventInit[] = [fact({ case: "dealStarted", value: { dealNumber: 1, dealer: 0, cardsEach: 13 } })];
  events.push({ body: { case: "sealed", value: { dealNumber: 1 } } });
  for (let trick = 0; trick < 13; trick += 1) {
    const cards = trick === 0 ? ["2C", "QS", "3C", "4C"] : [hearts[trick], "5C", "6C", "7C"];
    const seat = trick === 0 ? 2 : 1;
    const points = cards.reduce((sum, card) => sum + (card === "QS" ? 13 : card.endsWith("H") ? 1 : 0), 0);
    events.push(fact({ case: "trickWon", value: { trickNumber: trick + 1, leader: seat, seat, cards, points } }));
  }
  const scored = { dealNumber: 1, scores: recordedScores.map(BigInt), totals: recordedTotals.map(BigInt) };
  events.push(fact({ case: "dealScored", value: scored }));
  events.push({ body: { case: "gameFinished", value: { totals: recordedTotals.map(BigInt), places: places(recordedTotals) } } });
  return [create(EventBatchSchema, { tableVersion: 1n, events })];
}

test("a seat that takes all 26 points shoots the moon: 0 for it, 26 for each other", () => {
  assert.deepEqual(dealScores([0, 26, 0, 0]), [26, 0, 26, 26]);
  assert.deepEqual(dealScores([4, 9, 13, 0]), [4, 9, 13, 0]);
});

test("the lowest total is first and equal totals share a place (docs/rules.md)", () => {
  assert.deepEqual(places([102, 64, 64, 89]), [4, 1, 1, 3]);
});

test("a log whose scores follow from its tricks agrees with the recount", () => {
  const result = recount(deal([0, 12, 13, 0], [0, 12, 13, 0]));
  assert.deepEqual(result.disagreements, []);
  assert.deepEqual(result.totals, [0, 12, 13, 0]);
  assert.equal(result.sealedEvents, 1);
});

test("a DealScored that differs from the tricks is reported", () => {
  const result = recount(deal([0, 13, 12, 0], [0, 13, 12, 0]));
  assert.ok(result.disagreements.some((text) => text.startsWith("deal 1: recomputed 0,12,13,0")));
  assert.ok(result.disagreements.some((text) => text.startsWith("totals 0,12,13,0, GameFinished")));
});
