// The house games' pay tables as the rules sheet shows them. The table service plays every house room
// with the library's default tables (services/table/house_round.py `settings_for`:
// libs/house_games/pay_tables.py), and no view carries them, so they are written out here;
// tests/web/test_house_pay_tables.py fails when they differ from the server's.

/** A combination's code (its catalogue name is `combination.<code>`): a code, not text. */
export type Combination =
  | "ROYAL_FLUSH" | "STRAIGHT_FLUSH" | "FOUR_OF_A_KIND" | "FULL_HOUSE" | "FLUSH" | "STRAIGHT"
  | "THREE_OF_A_KIND" | "TWO_PAIR" | "ONE_PAIR" | "ACE_KING" | "HIGH_CARD";

/** A combination and what it pays, "N to 1". */
export interface PayLine {
  combination: Combination;
  odds: number;
}

/** Casino Hold'em: the ante by the player's hand (the bet always pays 1:1), best first. */
export const CASINO_HOLDEM_ANTE: readonly PayLine[] = [
  { combination: "ROYAL_FLUSH", odds: 100 },
  { combination: "STRAIGHT_FLUSH", odds: 20 },
  { combination: "FOUR_OF_A_KIND", odds: 10 },
  { combination: "FULL_HOUSE", odds: 3 },
  { combination: "FLUSH", odds: 2 },
  { combination: "STRAIGHT", odds: 1 },
  { combination: "THREE_OF_A_KIND", odds: 1 },
  { combination: "TWO_PAIR", odds: 1 },
  { combination: "ONE_PAIR", odds: 1 },
  { combination: "HIGH_CARD", odds: 1 },
];

/** Casino Hold'em: the bet (the call) pays 1:1 when the player's hand beats a qualified dealer. */
export const CASINO_HOLDEM_BET_ODDS = 1;

/** Russian Poker: the bet by the box's combination (main pay table), best first. */
export const RUSSIAN_POKER_BET: readonly PayLine[] = [
  { combination: "ROYAL_FLUSH", odds: 100 },
  { combination: "STRAIGHT_FLUSH", odds: 50 },
  { combination: "FOUR_OF_A_KIND", odds: 20 },
  { combination: "FULL_HOUSE", odds: 7 },
  { combination: "FLUSH", odds: 5 },
  { combination: "STRAIGHT", odds: 4 },
  { combination: "THREE_OF_A_KIND", odds: 3 },
  { combination: "TWO_PAIR", odds: 2 },
  { combination: "ONE_PAIR", odds: 1 },
  { combination: "ACE_KING", odds: 1 },
];

/** Russian Poker's bonus bet on the five dealt cards: fixed odds ... */
export const RUSSIAN_POKER_BONUS: readonly PayLine[] = [
  { combination: "FOUR_OF_A_KIND", odds: 200 },
  { combination: "FULL_HOUSE", odds: 70 },
  { combination: "FLUSH", odds: 50 },
  { combination: "STRAIGHT", odds: 40 },
  { combination: "THREE_OF_A_KIND", odds: 7 },
  { combination: "TWO_PAIR", odds: 2 },
];

/** ... and a share of the jackpot, in percent, for the best two. */
export const RUSSIAN_POKER_JACKPOT_PERCENT: readonly { combination: Combination; percent: number }[] = [
  { combination: "ROYAL_FLUSH", percent: 100 },
  { combination: "STRAIGHT_FLUSH", percent: 10 },
];
