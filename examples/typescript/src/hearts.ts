// Hearts' scores recomputed from a table's public typed facts alone: the cards each trick took
// (TrickWon), the moon rule, running totals and places. This is the client's own check of the
// service, so the few rules it needs are written here and nowhere else in the example.

import type { EventBatch } from "./gen/cardtable/events/v1/events_pb.js";

/** What the log says and what the client recomputed from it. */
export interface Recount {
  deals: { dealNumber: number; recomputed: number[]; recorded: number[] }[];
  totals: number[];
  places: number[];
  finished?: { totals: number[]; places: number[] };
  sealedEvents: number;
  /** Every way the log disagrees with the recount; empty when it agrees. */
  disagreements: string[];
}

const SEATS = 4;

/** docs/rules.md#hearts-scoring: each heart 1 point, the queen of spades 13. */
export function cardPoints(card: string): number {
  if (card === "QS") {
    return 13;
  }
  return card.endsWith("H") ? 1 : 0;
}

/**
 * A deal's scores from the points each seat took (docs/rules.md#hearts-scoring): a seat that
 * took all 26 shot the moon and scores 0, every other seat 26.
 */
export function dealScores(taken: number[]): number[] {
  const shooter = taken.indexOf(26);
  return shooter < 0 ? [...taken] : taken.map((_, seat) => (seat === shooter ? 0 : 26));
}

/** Places by total, the lowest first; equal totals share a place (docs/rules.md). */
export function places(totals: number[]): number[] {
  return totals.map((total) => 1 + totals.filter((other) => other < total).length);
}

function same(left: readonly number[], right: readonly number[]): boolean {
  return left.length === right.length && left.every((value, index) => value === right[index]);
}

const numbers = (values: readonly (bigint | number)[]): number[] => values.map(Number);

/** Folds the log's public events into the recount, noting every disagreement on the way. */
export function recount(batches: EventBatch[]): Recount {
  const result: Recount = {
    deals: [],
    totals: new Array<number>(SEATS).fill(0),
    places: [],
    sealedEvents: 0,
    disagreements: [],
  };
  const disagree = (text: string): void => {
    result.disagreements.push(text);
  };
  let taken = new Array<number>(SEATS).fill(0);
  let moonShooter: number | undefined;
  for (const batch of batches) {
    for (const event of batch.events) {
      const body = event.body;
      if (body.case === "sealed") {
        result.sealedEvents += 1; // a seat's hidden cards or a shuffle: no score in it
      } else if (body.case === "gameFinished") {
        result.finished = { totals: numbers(body.value.totals), places: body.value.places };
      } else if (body.case === "factRecorded") {
        const fact = body.value.body;
        if (fact.case === undefined) {
          throw new Error("a fact without a typed body: this log predates typed facts");
        }
        if (fact.case === "dealStarted") {
          taken = new Array<number>(SEATS).fill(0);
          moonShooter = undefined;
        } else if (fact.case === "trickWon") {
          const trick = fact.value;
          const points = trick.cards.reduce((sum, card) => sum + cardPoints(card), 0);
          if (points !== trick.points) {
            disagree(`trick ${trick.trickNumber}: ${trick.cards.join(" ")} is ${points} points, not ${trick.points}`);
          }
          taken[trick.seat] += points;
        } else if (fact.case === "moonShot") {
          moonShooter = fact.value.seat;
        } else if (fact.case === "dealScored") {
          const scored = fact.value;
          const recomputed = dealScores(taken);
          const recorded = numbers(scored.scores);
          result.totals = result.totals.map((total, seat) => total + recomputed[seat]);
          result.deals.push({ dealNumber: scored.dealNumber, recomputed, recorded });
          if (!same(recomputed, recorded)) {
            disagree(`deal ${scored.dealNumber}: recomputed ${recomputed}, DealScored says ${recorded}`);
          }
          if (!same(result.totals, numbers(scored.totals))) {
            disagree(`deal ${scored.dealNumber}: totals ${result.totals}, DealScored says ${scored.totals}`);
          }
          const shooter = taken.indexOf(26);
          if ((shooter < 0 ? undefined : shooter) !== moonShooter) {
            disagree(`deal ${scored.dealNumber}: the moon was shot by seat ${shooter}, MoonShot says ${moonShooter}`);
          }
        }
      }
    }
  }
  result.places = places(result.totals);
  if (result.finished === undefined) {
    disagree("the log holds no GameFinished event");
  } else {
    if (!same(result.totals, result.finished.totals)) {
      disagree(`totals ${result.totals}, GameFinished says ${result.finished.totals}`);
    }
    if (!same(result.places, result.finished.places)) {
      disagree(`places ${result.places}, GameFinished says ${result.finished.places}`);
    }
  }
  return result;
}

/** The recount against another answer (the scoring service's): totals, places, each deal. */
export function compareWith(
  source: string,
  result: Recount,
  answer: { totals: number[]; places: number[]; deals: { dealNumber: number; scores: number[] }[] },
): string[] {
  const differences: string[] = [];
  if (!same(result.totals, answer.totals)) {
    differences.push(`totals ${result.totals}, ${source} says ${answer.totals}`);
  }
  if (!same(result.places, answer.places)) {
    differences.push(`places ${result.places}, ${source} says ${answer.places}`);
  }
  if (answer.deals.length !== result.deals.length) {
    differences.push(`${result.deals.length} deals, ${source} has ${answer.deals.length}`);
  }
  for (const [index, deal] of result.deals.entries()) {
    const theirs = answer.deals[index];
    if (theirs !== undefined && (theirs.dealNumber !== deal.dealNumber || !same(deal.recomputed, theirs.scores))) {
      differences.push(`deal ${deal.dealNumber}: recomputed ${deal.recomputed}, ${source} says ${theirs.scores}`);
    }
  }
  return differences;
}
