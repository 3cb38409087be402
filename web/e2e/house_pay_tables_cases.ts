// Prints the house games' pay tables as the page shows them (src/house_pay_tables.ts), with the name
// each combination reads as in both languages, for tests/web/test_house_pay_tables.py to compare with
// the server's (libs/house_games/pay_tables.py through services/table/house_round.py).
import { CASINO_HOLDEM_ANTE, CASINO_HOLDEM_BET_ODDS, RUSSIAN_POKER_BET, RUSSIAN_POKER_BONUS, RUSSIAN_POKER_JACKPOT_PERCENT } from "../src/house_pay_tables";
import { known, t, useLanguage } from "../src/i18n";

let input = "";
for await (const chunk of process.stdin) input += chunk;
void input;
const names: Record<string, Record<string, string>> = { ru: {}, en: {} };
for (const lang of ["ru", "en"] as const) {
  useLanguage(lang);
  for (const line of [...CASINO_HOLDEM_ANTE, ...RUSSIAN_POKER_BET, ...RUSSIAN_POKER_BONUS, ...RUSSIAN_POKER_JACKPOT_PERCENT]) {
    const key = `combination.${line.combination}`;
    names[lang][line.combination] = known(key) ? t(key) : "";
  }
}
const odds = (lines: readonly { combination: string; odds: number }[]): Record<string, number> =>
  Object.fromEntries(lines.map((line) => [line.combination, line.odds]));
console.log(JSON.stringify({
  casinoHoldemAnte: odds(CASINO_HOLDEM_ANTE),
  casinoHoldemBet: CASINO_HOLDEM_BET_ODDS,
  russianPokerBet: odds(RUSSIAN_POKER_BET),
  russianPokerBonus: odds(RUSSIAN_POKER_BONUS),
  russianPokerJackpotPercent: Object.fromEntries(RUSSIAN_POKER_JACKPOT_PERCENT.map((line) => [line.combination, line.percent])),
  order: {
    casinoHoldemAnte: CASINO_HOLDEM_ANTE.map((line) => line.odds),
    russianPokerBet: RUSSIAN_POKER_BET.map((line) => line.odds),
    russianPokerBonus: RUSSIAN_POKER_BONUS.map((line) => line.odds),
  },
  names,
}));
