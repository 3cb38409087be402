"""The table's log: it follows the play, except that the end of a hand (its last betting round, the
showdown and the result lines) stays in the window until the next deal (issue 39: the all-in and
the call scrolled away under the lines that came after them before the player had read them)."""

from __future__ import annotations

from typing import Any

from textual.widgets import Log

from poker.table.v1 import table_pb2


class HandLog(Log):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # Log line numbers: where the hand's last betting round began, and the pinned hand end
        # (from that line to its result line) while one is pinned.
        self._round_start = 0
        self._new_round = True
        self.pinned: tuple[int, int] | None = None

    def note(self, event: table_pb2.TableEvent) -> None:
        """Before an event's line is added: a deal or a street opens a betting round, whose first
        action is where a hand's end will be pinned from; the next deal unpins the last hand."""
        which = event.WhichOneof("kind")
        if which == "notice" and event.notice.code == "HAND_STARTED":
            if self.pinned is not None:
                self.pinned = None
                self.scroll_end(animate=False, immediate=True)
            self._round_start = self.line_count
            self._new_round = True
        elif which == "cards" and not event.seat:
            self._new_round = True  # the board: the next action opens a betting round
        elif which == "action" and self._new_round:
            self._round_start = self.line_count
            self._new_round = False

    def add(self, line: str) -> None:
        """A line at the end; while a hand's end is pinned it goes below it, the window kept on it."""
        self.write_line(line, scroll_end=None if self.pinned is None else False)
        self._keep_pinned_in_view()

    def add_result(self, line: str) -> None:
        """The hand's result line, which pins the hand's end until the next deal."""
        result = self.line_count
        self.write_line(line)
        self.pinned = (min(self._round_start, result), result)
        self._keep_pinned_in_view()

    def _keep_pinned_in_view(self) -> None:
        """The window starts at the hand's last betting round when there is room, and never so far
        up that the result falls below it; what came after shows below."""
        if self.pinned is None:
            return
        start, result = self.pinned
        height = max(1, self.scrollable_content_region.height)
        top = max(min(start, int(self.max_scroll_y)), result - height + 1, 0)
        self.scroll_to(y=top, animate=False, immediate=True)
