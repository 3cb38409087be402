"""Dead and extra blinds in main and side pots (issue 25 item 1; rules 8 and 10, docs/engine.md).

A returning player who owes both blinds posts a live extra big blind and a dead small blind. The dead
small blind is dead money: it goes into the main pot and gives its poster no claim of its own, so it
never comes back to the poster unless they win the main pot. Before the fix the dead chips formed a
pot only their poster could win (a 5-chip "side pot" back to seat 3; an all-in loser kept a 50-chip
dead blind).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from poker_engine.config import ForcedPost, HandConfig, PostKind, RakeRule, SeatConfig, Variant
from poker_engine.events import BlindPosted, HandEnded, PotAwarded
from poker_engine.hand import Hand
from poker_engine.pots import build_pots
from poker_engine.replay import replay_hand
from tests.engine.conftest import HandBuilder
from tests.engine.test_hand_properties import play_randomly


def _check_down(hand: Hand) -> None:
    while not hand.is_over:
        legal = hand.legal_actions()
        assert legal is not None
        hand.call(legal.seat) if legal.can_call else hand.check(legal.seat)


def test_a_dead_small_blind_is_won_with_the_main_pot_by_its_winner(make_hand: HandBuilder) -> None:
    # The issue's hand: button seat 0, seat 3 returns owing both blinds, all check down, seat 0 wins.
    hand = make_hand(
        {0: 1000, 1: 1000, 2: 1000, 3: 1000},
        button=0,
        holes={0: "AsAd", 1: "7c2d", 2: "8c3d", 3: "9c4h"},
        board="KhQsTd5s6s",
        extra_posts=(ForcedPost(3, PostKind.EXTRA_BIG_BLIND), ForcedPost(3, PostKind.DEAD_SMALL_BLIND)),
    )
    _check_down(hand)
    result = hand.result
    assert result is not None
    nets = {r.seat: r.net for r in result.results}
    assert nets == {0: 35, 1: -10, 2: -10, 3: -15}
    assert [(p.amount, p.winners) for p in result.pots] == [(45, ((0, 45),))]


def test_the_issue_hand_replays_with_the_dead_blind_in_the_main_pot() -> None:
    out = replay_hand(
        {
            "seats": [{"seat": s, "player_id": f"p{s}", "stack": 1000} for s in range(4)],
            "button": 0,
            "small_blind": 5,
            "big_blind": 10,
            "extra_posts": [{"seat": 3, "kind": "EXTRA_BIG_BLIND"}, {"seat": 3, "kind": "DEAD_SMALL_BLIND"}],
            "deck": "7c 8c 9c As 2d 3d 4h Ad Jc Kh Qs Td Jd 5s Jh 6s",
            "actions": [
                {"seat": 3, "action": "CHECK"},
                {"seat": 0, "action": "CALL"},
                {"seat": 1, "action": "CALL"},
            ]
            + [{"seat": 2, "action": "CHECK"}]
            + [{"seat": s, "action": "CHECK"} for _ in range(3) for s in (1, 2, 3, 0)],
        }
    )
    assert out["ok"]
    assert {r["seat"]: r["net"] for r in out["results"]} == {0: 35, 1: -10, 2: -10, 3: -15}


def test_an_all_in_poster_who_loses_keeps_none_of_their_dead_blind(make_hand: HandBuilder) -> None:
    # Seat 3 has 60: a live big blind of 50 and a dead small blind of 10 put it all in; it loses.
    hand = make_hand(
        {0: 5000, 1: 5000, 2: 5000, 3: 60},
        button=0,
        small_blind=10,
        big_blind=50,
        holes={0: "AsAd", 1: "7c2d", 2: "8c3d", 3: "9c4h"},
        board="KhQsTd5s6s",
        extra_posts=(ForcedPost(3, PostKind.EXTRA_BIG_BLIND), ForcedPost(3, PostKind.DEAD_SMALL_BLIND)),
    )
    _check_down(hand)
    result = hand.result
    assert result is not None
    assert {r.seat: r.final_stack for r in result.results}[3] == 0
    assert all(3 not in dict(p.winners) for p in result.pots)


def _layered_pots(live: dict[int, int], contenders: set[int], dead: int) -> list[tuple[int, set[int]]]:
    left = dict(live)
    pots: list[tuple[int, set[int]]] = []
    while any(left.values()):
        reaching = [left[s] for s in contenders if left[s] > 0]
        layer = min(reaching) if reaching else max(left.values())
        amount = sum(min(chips, layer) for chips in left.values())
        eligible = {s for s in contenders if left[s] >= layer} if reaching else set()
        left = {s: chips - min(chips, layer) for s, chips in left.items()}
        if not eligible and not pots:
            pots.append((amount, set(contenders)))  # nobody still in put a chip in: theirs all the same
        elif pots and (not eligible or pots[-1][1] == eligible):
            pots[-1] = (pots[-1][0] + amount, pots[-1][1])
        else:
            pots.append((amount, eligible))
    if dead:
        pots = [(pots[0][0] + dead, pots[0][1]), *pots[1:]] if pots else [(dead, set(contenders))]
    return pots


def test_build_pots_puts_dead_money_in_the_main_pot() -> None:
    # Live contributions 10 each, seat 3 also 5 dead; seat 3 all-in for less in a side-pot hand.
    pots = build_pots([10, 10, 10, 15], [False] * 4, dead=[0, 0, 0, 5])
    assert [(p.amount, p.eligible) for p in pots] == [(45, (0, 1, 2, 3))]
    pots = build_pots([100, 100, 100, 60], [False] * 4, dead=[0, 0, 0, 10])
    assert [(p.amount, p.eligible) for p in pots] == [(210, (0, 1, 2, 3)), (150, (0, 1, 2))]


@st.composite
def hands_with_forced_posts(draw: st.DrawFn) -> HandConfig:
    count = draw(st.integers(3, 8))
    seats = sorted(draw(st.lists(st.integers(0, 9), min_size=count, max_size=count, unique=True)))
    # Short stacks too, so that posters are all-in through their posts (the side-pot cases).
    stacks = draw(
        st.lists(st.one_of(st.integers(1, 40), st.integers(40, 2000)), min_size=count, max_size=count)
    )
    variant = draw(st.sampled_from(Variant))
    button = draw(st.sampled_from(seats))
    posters = draw(st.lists(st.sampled_from(seats), max_size=3, unique=True))
    posts: list[ForcedPost] = []
    for seat in posters:
        kinds = draw(
            st.sampled_from(
                [
                    (PostKind.EXTRA_BIG_BLIND,),
                    (PostKind.DEAD_SMALL_BLIND,),
                    (PostKind.EXTRA_BIG_BLIND, PostKind.DEAD_SMALL_BLIND),
                ]
            )
        )
        posts.extend(ForcedPost(seat, kind) for kind in kinds)
    return HandConfig(
        variant=variant,
        seats=tuple(SeatConfig(seat, f"p{seat}", stack) for seat, stack in zip(seats, stacks, strict=True)),
        button=button,
        small_blind=5,
        big_blind=10,
        deck=tuple(draw(st.permutations(range(52)))),
        step=5 if variant is Variant.NO_LIMIT else 1,
        rake=RakeRule(draw(st.sampled_from([0, 500])), 30),
        extra_posts=tuple(posts),
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=hands_with_forced_posts(), data=st.data())
def test_dead_money_is_in_the_main_pot_and_no_pot_is_only_its_posters_own_chips(
    config: HandConfig, data: st.DataObject
) -> None:
    hand = Hand(config)
    dead = {e.seat: 0 for e in hand.events if isinstance(e, BlindPosted)}
    for event in hand.events:
        if isinstance(event, BlindPosted) and event.post is PostKind.DEAD_SMALL_BLIND:
            dead[event.seat] += event.amount
    play_randomly(hand, data)
    result = hand.result
    assert isinstance(result, HandEnded)
    contributed = hand.total_contributed
    pots: list[PotAwarded] = list(result.pots)
    # Conservation: every chip put in is in a pot or the rake.
    assert sum(p.amount + p.rake for p in pots) == sum(contributed.values())
    assert sum(r.net for r in result.results) + result.rake == 0
    # The dead money is in the main pot.
    if sum(dead.values()):
        assert pots[0].amount + pots[0].rake >= sum(dead.values())
    # The pots are what a chip-by-chip layering of the live chips gives, the dead chips added to the
    # main pot (an oracle written independently of pots.build_pots).
    live = {seat: contributed[seat] - dead.get(seat, 0) for seat in contributed}
    expected = _layered_pots(live, {s for s in contributed if hand.in_hand(s)}, sum(dead.values()))
    assert [(p.amount + p.rake, set(p.eligible)) for p in pots] == expected
    # Each pot's contenders reached its level with live chips: dead chips give no claim.
    for pot in pots:
        for seat in pot.eligible:
            assert hand.in_hand(seat)
    # A player who wins nothing loses exactly what they put in, dead blinds included.
    won = {seat: sum(a for p in pots for s, a in p.winners if s == seat) for seat in contributed}
    for r in result.results:
        if not won.get(r.seat):
            assert r.net == -contributed[r.seat]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=hands_with_forced_posts(), data=st.data())
def test_the_running_pots_add_up_and_end_as_the_settled_pots(config: HandConfig, data: st.DataObject) -> None:
    """Issue 25 item 4b: the pots shown while the hand runs. Every chip put in is in one of them; a
    player still in who can bet contends for every pot; an all-in player only for the pots up to what
    they put in; and when the hand is over they are the pots it settled."""
    hand = Hand(config)
    while True:
        pots = hand.pots()
        assert sum(p.amount for p in pots) == hand.pot_total
        if hand.is_over:
            break
        stacks = hand.stacks
        for seat in hand.seats:
            holding = [seat in p.eligible for p in pots]
            if not hand.in_hand(seat):
                assert not any(holding)
            elif stacks[seat] > 0:
                assert all(holding), (seat, pots)
            else:
                # All-in: a prefix of the pots (from the main pot up to their level); none for a
                # player whose only chips in are dead (all-in on a dead small blind).
                assert holding == sorted(holding, reverse=True)
                assert holding[0] or all(
                    e.post is PostKind.DEAD_SMALL_BLIND
                    for e in hand.events
                    if isinstance(e, BlindPosted) and e.seat == seat
                )
        legal = hand.legal_actions()
        assert legal is not None
        choice = data.draw(st.sampled_from(["fold", "check_call", "all_in", "wager"]))
        if choice == "fold" and legal.can_call:
            hand.fold(legal.seat)
        elif choice == "all_in" and hand.can_all_in(legal.seat):
            hand.all_in(legal.seat)
        elif choice == "wager" and (legal.can_bet or legal.can_raise):
            hand.bet(legal.seat, legal.min_to) if legal.can_bet else hand.raise_to(legal.seat, legal.min_to)
        else:
            hand.call(legal.seat) if legal.can_call else hand.check(legal.seat)
    result = hand.result
    assert result is not None
    assert [(p.amount, p.eligible) for p in pots] == [
        (p.amount + p.rake, tuple(sorted(p.eligible))) for p in result.pots
    ]


def test_a_short_all_in_big_blind_shows_a_main_pot_it_can_win_and_a_side_pot_it_cannot(
    make_hand: HandBuilder,
) -> None:
    # The issue's table: the big blind (seat 2) all-in for 10, two others bet on.
    hand = make_hand({0: 1000, 1: 1000, 2: 10, 3: 1000}, button=0)
    hand.raise_to(3, 30)
    hand.call(0)
    hand.call(1)
    pots = hand.pots()
    assert [(p.amount, p.eligible) for p in pots] == [(40, (0, 1, 2, 3)), (60, (0, 1, 3))]
