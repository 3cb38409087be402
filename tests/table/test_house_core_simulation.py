"""A seeded simulation of the house-game round core (services/table/house/house_core.py): random players,
bets (legal and not), decisions (legal and not, request ids repeated), clock jumps that time boxes
out, stake, decision and settlement calls that fail, come late or are refused, voids that fairness
hears late or never (the shell dies first), and crashes that replay the journal as the journals give it
(the open rounds' entries: a restarted table forgets its closed rounds) at random inputs. At every step: the journal replayed equals the state; no decision
is applied twice; every notice goes to the round's own player. For every round closed: the wallet
changed by exactly the library's player result (settled) or not at all (refunded, refused), the
house bank by the rest, and the round closed exactly once.

POKER_SIM_HANDS sets the number of rounds (default: a few hundred, fast on a loaded machine)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections import Counter
from typing import Any

import pytest

from house_games import Account, HouseGameError
from service_runtime.errors import DomainError
from services.table.house import house_core as core
from services.table.house.house_round import (
    BoxBet,
    Decision,
    HouseGame,
    HouseRoom,
    PlannedTransfer,
    check_bets,
    largest_payout,
)

ROUNDS = int(os.environ.get("POKER_SIM_HANDS", "1200"))
DECISION_SECONDS = 20.0
PLAYERS = ("ann", "bob", "cyd")


class Cashier:
    """Every transfer applied once by its id; the wallets, the house bank, its cover and the jackpot."""

    def __init__(self) -> None:
        self.applied: dict[str, PlannedTransfer] = {}
        self.refused: set[str] = set()
        self.wallet: Counter[str] = Counter()

    def batch(self, player: str, transfers: tuple[PlannedTransfer, ...]) -> None:
        for t in transfers:
            if t.transfer_id not in self.applied:
                self.applied[t.transfer_id] = t
                if t.counter == "wallet":
                    self.wallet[player] += t.amount if t.to_player else -t.amount

    def round_delta(self, round_id: str) -> Counter[str]:
        """Each account's change by the round's transfers: wallet, bank, cover, jackpot."""
        delta: Counter[str] = Counter()
        for t in self.applied.values():
            if not t.transfer_id.startswith(f"hgr:{round_id}:"):
                continue
            signed = t.amount if t.to_player else -t.amount  # what the counter gains
            delta[t.counter] += signed
            delta[t.house_account] -= signed
        return delta

    def amount(self, transfer_id: str) -> int:
        t = self.applied.get(transfer_id)
        return 0 if t is None else t.amount


class Sim:
    def __init__(
        self,
        seed: int,
        game: HouseGame,
        keep_finished: int = core.KEEP_FINISHED_ROUNDS,
        max_payout: int = 5_000,
    ) -> None:
        self.rng = random.Random(seed)
        self.room = HouseRoom(
            f"r-{game.value}", game, 1, boxes=3, min_ante=10, max_ante=100, max_payout=max_payout
        )
        self.keep_finished = keep_finished
        self.state = core.empty("t.1", self.room, DECISION_SECONDS, keep_finished=keep_finished)
        # Every round that ended, with how.
        self.ended: dict[str, core.Stage] = {}
        # What fairness knows of each round's hand: committed, dealt (sealed), voided, finished. Only
        # what reached it: a void the shell had not sent when it died never did.
        self.fairness: dict[str, str] = {}
        self.voids_in_flight: set[str] = set()  # RevealVoid effects the shell is sending
        self.journal: list[dict[str, Any]] = []  # as the journal holds it now (compacted at a crash)
        self.history: list[dict[str, Any]] = []  # every entry ever written
        self.decks: dict[str, tuple[int, ...]] = {}  # what fairness seals, by round
        self.cashier = Cashier()
        self.now = 1_000.0
        self.opened = 0
        self.requests: dict[str, list[tuple[str, core.Decide]]] = {p: [] for p in PLAYERS}
        self.fed: list[core.Input] = []  # answers given, to deliver again late
        self.finished: Counter[str] = Counter()
        self.voided: Counter[str] = Counter()
        self.crashes = 0
        self.shadow = self.state  # the journal folded by apply_entry
        self.folded = 0

    # ------------------------------------------------------------------ the shell's part

    def feed(self, given: core.Input) -> core.Step | None:
        try:
            step = core.feed(self.state, given)
        except DomainError:
            return None
        self.journal.extend(step.entries)
        self.history.extend(step.entries)
        self.state = step.state
        for notice in step.notices:
            assert notice.player == self.state.rounds[notice.round_id].player, notice
        for effect in step.effects:
            if isinstance(effect, core.Finish):
                self.finished[effect.round_id] += 1
            elif isinstance(effect, core.RevealVoid):
                self.voids_in_flight.add(effect.round_id)
        self.check()
        return step

    def check(self) -> None:
        # The journal's new entries folded (apply_entry alone, never feed) give the state again: so
        # the whole journal replayed gives it at every step, without replaying it all each time.
        for entry in self.journal[self.folded :]:
            round_ = self.state.rounds.get(str(entry["round_id"]))
            self.shadow = core.apply_entry(self.shadow, entry, None if round_ is None else round_.deck)
        self.folded = len(self.journal)
        assert self.shadow.durable() == self.state.durable()
        finished = [r for r in self.state.rounds.values() if not r.stage.open]
        # At most `keep_finished` once a round opens, plus the rounds that ended since (one a player).
        assert len(finished) <= self.keep_finished + len(PLAYERS), "the table remembers too many rounds"
        self.ended.update((r.round_id, r.stage) for r in finished)
        for round_ in self.state.rounds.values():
            transfers = [d.transfer for d in round_.logged if d.paid]
            assert len(transfers) == len(set(transfers)), "a decision applied twice"
            requests = [d.request for d in round_.logged if d.request is not None]
            assert len(requests) == len(set(requests)), "a request applied twice"
        for (player, _), rounds in self.state.bets.items():
            # A PlaceHouseBets request id opens one round, or more only after refunds or refusals.
            stages = [self.state.rounds[r].stage if r in self.state.rounds else self.ended[r] for r in rounds]
            assert all(s in (core.Stage.VOIDED, core.Stage.REFUSED) for s in stages[:-1]), (player, stages)

    # ------------------------------------------------------------------ players

    def bets(self, player: str) -> None:
        count = self.rng.randint(1, 3 if self.room.game is HouseGame.CASINO_HOLDEM else 2)
        ante = self.rng.choice([5, 10, 50, 100, 150])  # 5 and 150 are out of range
        dark = self.room.game is HouseGame.RUSSIAN_POKER and count == 1 and self.rng.random() < 0.2
        bets = [BoxBet(box, ante, dark=dark) for box in self.rng.sample([1, 2, 3, 4], count)]
        try:
            wagers = check_bets(self.room, player, bets)
        except HouseGameError:
            return  # refused before the core (the shell's check)
        # Now and then a request id used before (a retry: the same round again, or a new attempt
        # after a refund or refusal).
        request = f"bets-{self.rng.randint(0, self.opened) if self.rng.random() < 0.3 else self.opened + 1}"
        attempt = self.state.attempt(player, request)
        round_id = f"{player}:{request}:{attempt}"
        # As the shell asks fairness (house_table._new_commitment): the request's attempt commits a
        # hand, or gets the one it committed before. Still committed: it opens the round (again, if
        # the table forgot it); voided: the next attempt; dealt or finished: the request's round was
        # played, never again.
        while round_id not in self.state.rounds:
            known = self.fairness.setdefault(round_id, "committed")
            if known == "committed":
                break
            if known != "voided":
                return
            attempt += 1
            round_id = f"{player}:{request}:{attempt}"
        if round_id not in self.decks:
            deck = list(range(52))
            self.rng.shuffle(deck)
            self.decks[round_id] = tuple(deck)
        given = core.Bets(
            player,
            request,
            round_id,
            "chain",
            "c0mm1t",
            wagers,
            0,
            largest_payout(self.room, wagers),
            self.now,
        )
        if self.feed(given) is not None and round_id in self.state.rounds:
            self.opened += 1

    def decide(self, player: str) -> None:
        known = self.requests[player]
        if known and self.rng.random() < 0.25:
            _, decide = self.rng.choice(known)  # a retry, same fields (or other ones: a conflict)
            if self.rng.random() < 0.2:
                decide = core.Decide(
                    player, decide.request_id, decide.round_id, decide.box, Decision.FOLD, (), 0, self.now
                )
            self.feed(decide)
            return
        round_ = self.state.current(player)
        if round_ is None:
            return
        request = f"d-{len(known)}"
        decision, box, amount = Decision.CALL, 1, 0
        cards: tuple[int, ...] = ()
        if round_.stage is core.Stage.PLAYING and self.rng.random() < 0.85:
            live = round_.live(self.room)
            due = live.due_boxes()
            if due:
                box = self.rng.choice(due)
                option = self.rng.choice(live.options(box))
                decision = option.decision
                if decision is Decision.EXCHANGE:
                    cards = tuple(sorted(self.rng.sample(range(5), self.rng.randint(1, 3))))
                if decision is Decision.INSURE:
                    amount = self.rng.randint(max(1, option.min_amount), max(1, option.max_amount))
        else:
            decision = self.rng.choice(list(Decision))
            box = self.rng.randint(0, 4)
        decide = core.Decide(player, request, round_.round_id, box, decision, cards, amount, self.now)
        known.append((request, decide))
        self.feed(decide)

    # ------------------------------------------------------------------ the services

    def answer(self) -> None:
        effects: list[Any] = list(core.outstanding(self.state))
        effects.extend(core.RevealVoid(r) for r in sorted(self.voids_in_flight))
        if not effects:
            return
        effect = self.rng.choice(effects)
        roll = self.rng.random()
        given: core.Input
        # The cashier answers an id it applied with its first answer (never a refusal), and an id
        # it refused with the refusal again.
        if isinstance(effect, (core.Stake, core.Pay)):
            ids = [t.transfer_id for t in effect.transfers]
            if any(i in self.cashier.applied for i in ids):
                roll = 1.0
            elif any(i in self.cashier.refused for i in ids):
                roll = 0.0
        if isinstance(effect, core.Stake):
            if roll < 0.1:
                given = core.StakeAnswer(effect.round_id, core.Outcome.REFUSED)
            elif roll < 0.3:
                if self.rng.random() < 0.5:
                    self.cashier.batch(effect.player, effect.transfers)  # applied, the answer lost
                given = core.StakeAnswer(effect.round_id, core.Outcome.UNAVAILABLE)
            else:
                self.cashier.batch(effect.player, effect.transfers)
                given = core.StakeAnswer(effect.round_id, core.Outcome.OK)
        elif isinstance(effect, core.Seal):
            round_ = self.state.rounds[effect.round_id]
            deck = self.decks[effect.round_id]
            if round_.stage is core.Stage.RESUMING:
                paid = frozenset(d.transfer for d in round_.logged if d.transfer in self.cashier.applied)
                given = core.Resume(effect.round_id, deck, paid, self.now, 5.0)
            elif roll < 0.1:
                if self.rng.random() < 0.5:
                    self.fairness[effect.round_id] = "dealt"  # sealed, the answer lost
                given = core.SealFailed(effect.round_id)
            else:
                given = core.Sealed(effect.round_id, deck, self.now)
            self.fairness[effect.round_id] = (
                "dealt" if isinstance(given, (core.Sealed, core.Resume)) else self.fairness[effect.round_id]
            )
        elif isinstance(effect, core.Pay):
            transfer = effect.transfer.transfer_id
            if roll < 0.1:
                self.cashier.refused.add(transfer)
                given = core.PayAnswer(effect.round_id, transfer, core.Outcome.REFUSED)
            elif roll < 0.3:
                if self.rng.random() < 0.5:
                    self.cashier.batch(effect.player, effect.transfers)
                given = core.PayAnswer(effect.round_id, transfer, core.Outcome.UNAVAILABLE)
            else:
                self.cashier.batch(effect.player, effect.transfers)
                given = core.PayAnswer(effect.round_id, transfer, core.Outcome.OK)
        elif isinstance(effect, core.Settle):
            if roll < 0.3:
                if self.rng.random() < 0.5:
                    self.cashier.batch(effect.player, effect.transfers)
                given = core.SettleAnswer(effect.round_id, core.Outcome.UNAVAILABLE)
            else:
                self.cashier.batch(effect.player, effect.transfers)
                given = core.SettleAnswer(effect.round_id, core.Outcome.OK)
        elif isinstance(effect, core.Refund):
            if roll < 0.2:
                return  # the cashier is away: asked again later
            # The stakes again (a stake refused before stays refused: nothing taken), then back.
            if not any(t.transfer_id in self.cashier.refused for t in effect.stakes):
                self.cashier.batch(effect.player, effect.stakes)
                self.cashier.batch(effect.player, effect.refunds)
            given = core.RefundAnswer(effect.round_id)
        elif isinstance(effect, core.RevealVoid):
            if roll < 0.3:
                return  # fairness is away: sent again later
            self.voids_in_flight.discard(effect.round_id)
            if self.fairness[effect.round_id] != "voided":
                self.voided[effect.round_id] += 1
                self.fairness[effect.round_id] = "voided"
            given = core.VoidRevealed(effect.round_id)
        else:  # pragma: no cover - outstanding lists only calls
            raise AssertionError(effect)
        if isinstance(given, core.StakeAnswer) and given.outcome is core.Outcome.REFUSED:
            self.cashier.refused.update(t.transfer_id for t in effect.transfers)  # type: ignore[union-attr]
        self.fed.append(given)
        self.feed(given)

    def late(self) -> None:
        """An answer delivered again (late, or twice): it changes nothing that it did not change."""
        if self.fed:
            self.feed(self.rng.choice(self.fed))

    def crash(self) -> None:
        """The shell dies (the calls it was making die with it): the next one replays the journal as
        the journals give it, the open rounds' entries (no deck: fairness seals them again)."""
        self.crashes += 1
        self.voids_in_flight.clear()
        decks = {r: d.deck for r, d in self.state.rounds.items() if d.deck is not None}
        self.state = core.replay(
            self.journal,
            table_id="t.1",
            room=self.room,
            decision_seconds=DECISION_SECONDS,
            decks=decks,
            keep_finished=self.keep_finished,
        )
        assert self.state.durable() == self.shadow.durable()  # the whole journal, from the start
        closed = {str(e["round_id"]) for e in self.journal if e["type"] == "closed"}
        self.journal = [e for e in self.journal if str(e["round_id"]) not in closed]
        self.folded = len(self.journal)
        self.state = core.replay(
            self.journal,
            table_id="t.1",
            room=self.room,
            decision_seconds=DECISION_SECONDS,
            decks={},
            keep_finished=self.keep_finished,
        )
        self.shadow = self.state
        self.fed.clear()
        self.feed(core.Reopen(self.now))

    # ------------------------------------------------------------------ the run

    def run(self, rounds: int) -> None:
        while self.opened < rounds:
            roll = self.rng.random()
            player = self.rng.choice(PLAYERS)
            if roll < 0.15:
                self.bets(player)
            elif roll < 0.45:
                self.decide(player)
            elif roll < 0.55:
                self.now += self.rng.choice([0.5, 3.0, 25.0])
                self.feed(core.Tick(self.now))
            elif roll < 0.6:
                self.late()
            elif roll < 0.605:
                self.crash()
            else:
                self.answer()
        for _ in range(10_000):  # no more players: every open round ends
            if not any(r.stage.open for r in self.state.rounds.values()) and not self.voids_in_flight:
                break
            self.now += 25.0
            self.feed(core.Tick(self.now))
            self.answer()
        self.final()

    def final(self) -> None:
        closes = Counter(e["round_id"] for e in self.history if e["type"] == "closed")
        opens = Counter(e["round_id"] for e in self.history if e["type"] == "open")
        assert max(opens.values()) == 1, "a round opened twice"
        # The journal replayed with every deck fairness sealed, forgetting no round: each round's
        # decisions as they took effect (the rounds the table forgot are checked too).
        dealt = core.replay(
            self.history,
            table_id="t.1",
            room=self.room,
            decision_seconds=DECISION_SECONDS,
            decks=self.decks,
            keep_finished=len(self.journal),
        )
        assert set(dealt.rounds) >= set(self.state.rounds)
        for round_id, round_ in dealt.rounds.items():
            assert not round_.stage.open, round_
            assert closes[round_id] == 1, "a round closed twice, or never"
            delta = self.cashier.round_delta(round_id)
            wallet, bank = delta["wallet"], delta["bank"]
            assert sum(delta.values()) == 0
            # Every reservation was given back, and it was exactly the round's stakes plus its cover.
            assert delta["cover"] == 0, round_id
            reserve = self.cashier.amount(f"hgr:{round_id}:cover")
            assert reserve in (0, sum(core.initial_stake(w) for w in round_.wagers) + round_.cover)
            if round_.stage is core.Stage.SETTLED:
                assert self.finished[round_id] == 1
                assert self.voided[round_id] == 0
                live = dealt.rounds[round_id].live(self.room)
                settlement = live.settle()
                # Stakes = paid back + the house's result: the wallet moved by the player's result.
                assert wallet == settlement.delta(Account.PLAYER), round_id
                assert bank == settlement.delta(Account.HOUSE_BANK), round_id
                assert wallet == round_.paid_out - sum(live.staked.values())
                # Whatever the cards, the round's reservation paid it: the bank paid out no more than
                # the round had reserved (stakes, decisions' stakes and the largest payout).
                out = sum(self.cashier.amount(f"hgr:{round_id}:out:{w.box}") for w in round_.wagers)
                assert out <= self.cashier.amount(f"hgr:{round_id}:free"), round_id
                assert self.cashier.amount(f"hgr:{round_id}:free") == reserve + sum(
                    d.taken.cost for d in round_.logged if d.paid
                ), round_id
            else:
                assert (wallet, bank) == (0, 0), round_id
                assert (self.finished[round_id], self.voided[round_id]) == (0, 1)


@pytest.mark.parametrize("game", list(HouseGame))
@pytest.mark.parametrize("seed", [1, 2])
def test_house_core_simulation(game: HouseGame, seed: int) -> None:
    sim = Sim(seed, game)
    sim.run(max(1, ROUNDS // 4))
    states = Counter(sim.ended.values())
    # The run met every path: settled, refunded and refused rounds, and crashes replayed.
    assert min(states[core.Stage.SETTLED], states[core.Stage.VOIDED], states[core.Stage.REFUSED]) > 0
    assert sim.crashes > 0


@pytest.mark.parametrize("game", list(HouseGame))
def test_a_round_never_pays_more_than_it_reserved_when_the_table_maximum_binds(game: HouseGame) -> None:
    """A table maximum of 60 chips against antes up to 100: the cap decides most wins, and every
    settled round's bank payments fit in its reservation (checked for each round in `final`)."""
    sim = Sim(7, game, max_payout=60)
    sim.run(max(1, ROUNDS // 4))
    assert Counter(sim.ended.values())[core.Stage.SETTLED] > 0


@pytest.mark.parametrize("game", list(HouseGame))
def test_a_table_forgets_its_oldest_finished_rounds_and_never_plays_one_again(game: HouseGame) -> None:
    """A table that keeps 4 finished rounds: its state stays bounded through hundreds of rounds,
    crashes and replays give the same state, retried request ids of forgotten rounds open nothing
    (the shell's fairness lookup), and every round ever opened closed once with its chips right."""
    sim = Sim(3, game, keep_finished=4)
    sim.run(max(40, ROUNDS // 8))
    assert len(sim.ended) > 4 * 5  # it forgot many
    assert len([r for r in sim.state.rounds.values() if not r.stage.open]) <= 4 + len(PLAYERS)
    assert sim.crashes > 0


def test_the_same_seed_plays_the_same_rounds() -> None:
    first, second = Sim(5, HouseGame.RUSSIAN_POKER), Sim(5, HouseGame.RUSSIAN_POKER)
    first.run(20)
    second.run(20)
    assert first.history == second.history


def test_the_round_core_is_pure_it_loads_no_event_loop_no_grpc_and_no_store() -> None:
    code = (
        "import sys; import services.table.house.house_core; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'asyncio', 'grpc', 'redis', 'sqlalchemy'}))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]"
