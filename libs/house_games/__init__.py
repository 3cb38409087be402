"""House-banked games played against the dealer: Casino Hold'em and Russian Poker.

Pure rules (no I/O, no clock, no randomness): a round takes the deck order from the fairness service,
the wagers placed before the deal and the settings; the table service then asks for legal decisions,
applies decisions and finally takes an itemised settlement to turn into cashier transfers.
See docs/house-games.md.
"""

from house_games.casino_holdem import CasinoHoldemRound, HoldemDecision, HoldemDecisionTaken, HoldemPhase
from house_games.errors import (
    HouseGameError,
    IllegalDecisionError,
    InvalidDeckError,
    InvalidSettingsError,
    InvalidWagerError,
)
from house_games.pay_tables import BonusPayTable, CasinoHoldemPayTable, RussianPokerPayTable
from house_games.russian_combinations import RussianCombination, RussianHand, assess_hand
from house_games.russian_poker import (
    BuyGame,
    BuySixthCard,
    DealerReplacement,
    DecisionKind,
    Exchange,
    Fold,
    Play,
    RussianDecision,
    RussianDecisionTaken,
    RussianPhase,
    RussianPokerRound,
    TakeAnte,
)
from house_games.settings import CasinoHoldemSettings, RussianPokerSettings, StillNoGameAnte
from house_games.settlement import (
    Account,
    BoxSettlement,
    Direction,
    Item,
    Outcome,
    RoundSettlement,
    SettlementLine,
    Transfer,
)
from house_games.wagers import BoxWager

__all__ = [
    "Account",
    "BonusPayTable",
    "BoxSettlement",
    "BoxWager",
    "BuyGame",
    "BuySixthCard",
    "CasinoHoldemPayTable",
    "CasinoHoldemRound",
    "CasinoHoldemSettings",
    "DealerReplacement",
    "DecisionKind",
    "Direction",
    "Exchange",
    "Fold",
    "HoldemDecision",
    "HoldemDecisionTaken",
    "HoldemPhase",
    "HouseGameError",
    "IllegalDecisionError",
    "InvalidDeckError",
    "InvalidSettingsError",
    "InvalidWagerError",
    "Item",
    "Outcome",
    "Play",
    "RoundSettlement",
    "RussianCombination",
    "RussianDecision",
    "RussianDecisionTaken",
    "RussianHand",
    "RussianPhase",
    "RussianPokerPayTable",
    "RussianPokerRound",
    "RussianPokerSettings",
    "SettlementLine",
    "StillNoGameAnte",
    "TakeAnte",
    "Transfer",
    "assess_hand",
]
