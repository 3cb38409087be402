"""The gRPC face of the history service: translates protobuf to application calls and back.

Who may call what is the access policy in `assembly.py`; whose hands a caller may read is decided
by the application from the caller's identity (the token's subject), never from a request field.
"""

from __future__ import annotations

from typing import Any

from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2, history_pb2_grpc
from service_runtime.auth import STAFF_ROLES, Role, ServiceName, current_caller
from service_runtime.errors import InvalidArgument
from service_runtime.proto_time import to_timestamp
from services.history.application import HistoryApplication
from services.history.audit_writers import writer_of
from services.history.records import Viewer
from services.history.releases import release_pb
from services.history.staff_directory import staff_member_pb

SERVICE_NAME = "poker.history.v1.HistoryService"


def _viewer() -> Viewer:
    caller = current_caller()
    return Viewer(subject=caller.subject, admin=caller.is_staff)


class HistoryServicer(history_pb2_grpc.HistoryServiceServicer):
    """One thin handler per RPC over the application."""

    def __init__(self, application: HistoryApplication) -> None:
        self._application = application

    async def RecordHand(  # noqa: N802 - the generated servicer names methods after the RPCs
        self, request: history_pb2.RecordHandRequest, context: Any
    ) -> history_pb2.RecordHandResponse:
        current_caller().require(ServiceName.TABLE)
        if not request.HasField("hand"):
            raise InvalidArgument("FIELD_REQUIRED", "hand is required", {"field": "hand"})
        already = await self._application.record_hand(request.hand)
        return history_pb2.RecordHandResponse(already_recorded=already)

    async def ListMyHands(  # noqa: N802
        self, request: history_pb2.ListMyHandsRequest, context: Any
    ) -> history_pb2.ListMyHandsResponse:
        hands, token = await self._application.list_my_hands(
            _viewer(),
            page_size=request.page.page_size,
            page_token=request.page.page_token,
            player_id=request.player_id,
        )
        return history_pb2.ListMyHandsResponse(
            hands=hands, page=common_pb2.PageResponse(next_page_token=token)
        )

    async def GetHand(  # noqa: N802
        self, request: history_pb2.GetHandRequest, context: Any
    ) -> history_pb2.GetHandResponse:
        return history_pb2.GetHandResponse(hand=await self._application.get_hand(_viewer(), request.hand_id))

    async def ListTableHands(  # noqa: N802
        self, request: history_pb2.ListTableHandsRequest, context: Any
    ) -> history_pb2.ListTableHandsResponse:
        hands, token = await self._application.list_table_hands(
            _viewer(), request.table_id, page_size=request.page.page_size, page_token=request.page.page_token
        )
        return history_pb2.ListTableHandsResponse(
            hands=hands, page=common_pb2.PageResponse(next_page_token=token)
        )

    async def ExportHands(  # noqa: N802
        self, request: history_pb2.ExportHandsRequest, context: Any
    ) -> history_pb2.ExportHandsResponse:
        content, content_type = await self._application.export_hands(
            _viewer(), list(request.hand_ids), int(request.format)
        )
        return history_pb2.ExportHandsResponse(content=content, content_type=content_type)

    async def ListBalanceChanges(  # noqa: N802
        self, request: history_pb2.ListBalanceChangesRequest, context: Any
    ) -> history_pb2.ListBalanceChangesResponse:
        lines, token = await self._application.list_balance_changes(
            _viewer(), int(request.pool), page_size=request.page.page_size, page_token=request.page.page_token
        )
        changes = [
            history_pb2.BalanceChange(
                transfer_id=line.transfer_id,
                time=to_timestamp(line.time),
                change=common_pb2.Chips(pool=line.pool, amount=line.change),
                balance_after=line.balance_after,
                reason=line.reason,
                reference=line.reference,
                account_id=line.account_id,
                table_id=line.table_id,
            )
            for line in lines
        ]
        return history_pb2.ListBalanceChangesResponse(
            changes=changes, page=common_pb2.PageResponse(next_page_token=token)
        )

    async def RecordAuditEvent(  # noqa: N802
        self, request: history_pb2.RecordAuditEventRequest, context: Any
    ) -> history_pb2.RecordAuditEventResponse:
        if not request.HasField("event"):
            raise InvalidArgument("FIELD_REQUIRED", "event is required", {"field": "event"})
        caller = current_caller()
        # The writer (its kinds, its name as actor, its ids' namespace) is the verified caller.
        writer = writer_of(caller.subject, service=caller.service, admin=caller.is_staff)
        already = await self._application.record_audit_event(writer, request.event)
        return history_pb2.RecordAuditEventResponse(already_recorded=already)

    async def ListAuditEvents(  # noqa: N802
        self, request: history_pb2.ListAuditEventsRequest, context: Any
    ) -> history_pb2.ListAuditEventsResponse:
        current_caller().require(*STAFF_ROLES)
        events, token = await self._application.list_audit_events(
            _viewer(),
            request.kind,
            page_size=request.page.page_size,
            page_token=request.page.page_token,
            actor=request.actor,
            player_id=request.player_id,
        )
        return history_pb2.ListAuditEventsResponse(
            events=events, page=common_pb2.PageResponse(next_page_token=token)
        )

    async def ListCases(  # noqa: N802
        self, request: history_pb2.ListCasesRequest, context: Any
    ) -> history_pb2.ListCasesResponse:
        current_caller().require(Role.RISK)
        found, token = await self._application.list_cases(
            int(request.kind), page_size=request.page.page_size, page_token=request.page.page_token
        )
        return history_pb2.ListCasesResponse(cases=found, page=common_pb2.PageResponse(next_page_token=token))

    async def GetCase(  # noqa: N802
        self, request: history_pb2.GetCaseRequest, context: Any
    ) -> history_pb2.GetCaseResponse:
        current_caller().require(Role.RISK)
        return history_pb2.GetCaseResponse(case=await self._application.get_case(request.case_id))

    async def HoldPlayer(  # noqa: N802
        self, request: history_pb2.HoldPlayerRequest, context: Any
    ) -> history_pb2.HoldPlayerResponse:
        caller = current_caller()
        caller.require(Role.RISK)
        hold, existing = await self._application.set_hold(
            caller.subject, request.request_id, request.player_id, request.reason, request.case_id, held=True
        )
        return history_pb2.HoldPlayerResponse(hold=hold, existing=existing)

    async def ReleasePlayer(  # noqa: N802
        self, request: history_pb2.ReleasePlayerRequest, context: Any
    ) -> history_pb2.ReleasePlayerResponse:
        caller = current_caller()
        caller.require(Role.RISK)
        # Four-eyes: a pending release, carried out when finance approves it (DecideRelease).
        release, existing = await self._application.ask_player_release(
            caller.subject, request.request_id, request.player_id, request.reason, request.case_id
        )
        return history_pb2.ReleasePlayerResponse(release=release_pb(release), existing=existing)

    async def DecideRelease(  # noqa: N802
        self, request: history_pb2.DecideReleaseRequest, context: Any
    ) -> history_pb2.DecideReleaseResponse:
        caller = current_caller()
        caller.require(Role.FINANCE)
        release, existing = await self._application.decide_release(
            caller.subject, request.decision_id, request.request_id, request.approve, request.reason
        )
        return history_pb2.DecideReleaseResponse(release=release_pb(release), existing=existing)

    async def ListReleaseRequests(  # noqa: N802
        self, request: history_pb2.ListReleaseRequestsRequest, context: Any
    ) -> history_pb2.ListReleaseRequestsResponse:
        releases, token = await self._application.list_releases(
            int(request.state), page_size=request.page.page_size, page_token=request.page.page_token
        )
        return history_pb2.ListReleaseRequestsResponse(
            releases=releases, page=common_pb2.PageResponse(next_page_token=token)
        )

    async def ResolveCase(  # noqa: N802
        self, request: history_pb2.ResolveCaseRequest, context: Any
    ) -> history_pb2.ResolveCaseResponse:
        caller = current_caller()
        caller.require(Role.RISK)
        # The actor of the audit is the verified caller, never a field of the request.
        case, existing, release = await self._application.resolve_case(
            caller.subject, request.request_id, request.case_id, int(request.resolution), request.reason
        )
        reply = history_pb2.ResolveCaseResponse(case=case, existing=existing)
        if release is not None:
            reply.release.CopyFrom(release_pb(release))
        return reply

    async def SetStaffMember(  # noqa: N802
        self, request: history_pb2.SetStaffMemberRequest, context: Any
    ) -> history_pb2.SetStaffMemberResponse:
        caller = current_caller()
        caller.require(Role.ADMIN)
        # The actor is the verified caller, never a field of the request.
        member, existing = await self._application.set_staff_member(caller.subject, request)
        return history_pb2.SetStaffMemberResponse(member=staff_member_pb(member), existing=existing)

    async def ListStaff(  # noqa: N802
        self, request: history_pb2.ListStaffRequest, context: Any
    ) -> history_pb2.ListStaffResponse:
        current_caller().require(Role.ADMIN)
        members, token = await self._application.list_staff(
            include_inactive=request.include_inactive,
            page_size=request.page.page_size,
            page_token=request.page.page_token,
        )
        return history_pb2.ListStaffResponse(
            members=members, page=common_pb2.PageResponse(next_page_token=token)
        )

    async def FindStaffMember(  # noqa: N802
        self, request: history_pb2.FindStaffMemberRequest, context: Any
    ) -> history_pb2.FindStaffMemberResponse:
        current_caller().require(ServiceName.GATEWAY)
        return history_pb2.FindStaffMemberResponse(member=await self._application.find_staff_member(request))
